/**
 * Creates on a computed resource (a definition with `review`: access reviews, token reviews,
 * token requests): nothing is stored.
 */

import type { KubeObject, ReviewContext } from "./definition.ts";
import type { RegistryCore } from "./core.ts";
import { checkBody, checkTypes, validateObject } from "./validation.ts";
import type { ReviewOptions, WriteResult } from "./write_options.ts";

/**
 * The body is checked as a create's (kind, types, unknown fields, the strategy's validation),
 * then the definition computes the answer.
 */
export async function reviewObject(
  core: RegistryCore,
  body: KubeObject,
  ctx: ReviewContext,
  opts: ReviewOptions,
): Promise<WriteResult> {
  const { def } = core;
  const obj = checkBody(core, body);
  // The answer's status is computed: what the client sent there (kube's typed clients send
  // an empty one) is not validated.
  delete obj.status;
  const typeCheck = checkTypes(core, obj);
  const warnings = await validateObject(
    core,
    obj,
    opts,
    async () => await def.strategy?.validateCreate?.(obj, ctx) ?? [],
    { checkMeta: false, typeCheck },
  );
  const out = await def.review!(obj, ctx);
  out.apiVersion = core.apiVersion;
  out.kind = def.kind;
  return { object: out, warnings };
}
