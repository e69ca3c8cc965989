/**
 * @bufbuild/cel's standard library (operators, conversions, string and time functions) plus
 * its strings extension, as Kubernetes has them; the platform libraries reuse its operators
 * so that their comparisons and sums behave exactly like CEL's.
 */

import { celEnv, type CelFunc, type CelValue, isCelError } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { RE2JS } from "re2js";

/** Compiled `matches` patterns: rules match the same literal patterns over and over (kube
 * compiles constant patterns once too); compiling one costs far more than running it. */
const patterns = new Map<string, RE2JS>();
const MAX_PATTERNS = 256;

const cachedRe2 = {
  compile(pattern: string): RE2JS {
    let re = patterns.get(pattern);
    if (re === undefined) {
      re = RE2JS.compile(pattern);
      if (patterns.size >= MAX_PATTERNS) patterns.delete(patterns.keys().next().value!);
      patterns.set(pattern, re);
    }
    return re;
  },
};

const resolver = celEnv({ funcs: strings, re2: cachedRe2 }).funcs;

/** Every standard function, unmetered. */
export const STANDARD_FUNCTIONS: readonly CelFunc[] = [...resolver];

/** Calls a standard function; throws its error (or a missing-overload error) as an Error. */
export function callStandard(
  name: string,
  target: CelValue | undefined,
  args: CelValue[],
): CelValue {
  const result = resolver.find(name)?.call(0, target, args);
  if (result === undefined) throw new Error(`found no matching overload for '${name}'`);
  if (isCelError(result)) throw new Error(result.message);
  return result;
}
