/**
 * Kubernetes' regex library: `s.find(re)` (the first match, or "") and `s.findAll(re[, n])`
 * (non-overlapping matches, at most n when n >= 0), with Go's rules for empty matches.
 * Patterns are RE2: checked by the RE2 engine behind `matches` (which also answers "no match"
 * in linear time), then run as a translated JS RegExp to learn where the matches are.
 */

import type { CelValue } from "@bufbuild/cel";
import { regexCost } from "../cost.ts";
import type { Library, LiteralCheck } from "../library.ts";
import { callStandard } from "../standard.ts";
import { INT, listOf, STRING } from "../types.ts";
import { re2ToJs } from "./re2_js.ts";

/** An RE2 syntax error in a pattern, or undefined. */
export function re2Problem(pattern: string): string | undefined {
  try {
    callStandard("matches", "", [pattern]);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Why find/findAll cannot run a pattern, or undefined. */
function findProblem(pattern: string): string | undefined {
  const problem = re2Problem(pattern);
  if (problem !== undefined) return problem;
  try {
    new RegExp(re2ToJs(pattern), "gu");
    return undefined;
  } catch (err) {
    return `pattern not supported by find/findAll: ${(err as Error).message}`;
  }
}

const compiled = new Map<string, RegExp>();
const MAX_COMPILED = 256;

function regExp(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (re === undefined) {
    const problem = findProblem(pattern);
    if (problem !== undefined) throw new Error(problem);
    re = new RegExp(re2ToJs(pattern), "gu");
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(pattern, re);
  }
  return re;
}

/** The matches of `pattern` in `input`, all of them when `limit` is negative. */
export function findAll(input: string, pattern: string, limit: number): string[] {
  const re = regExp(pattern);
  if (limit === 0 || callStandard("matches", input, [pattern]) !== true) return [];
  const out: string[] = [];
  let prevEnd = -1;
  for (let pos = 0; pos <= input.length && (limit < 0 || out.length < limit);) {
    re.lastIndex = pos;
    const m = re.exec(input);
    if (m === null) break;
    const end = m.index + m[0].length;
    // An empty match right after the previous match does not count.
    const accept = !(end === pos && m.index === prevEnd);
    pos = end === pos ? pos + (input.codePointAt(pos)! > 0xffff ? 2 : 1) : end;
    prevEnd = end;
    if (accept) out.push(m[0]);
  }
  return out;
}

const cost = (target: CelValue | undefined, [pattern]: CelValue[]) =>
  1 + regexCost(target as string, pattern as string);

const literalCheck = (fn: string, problem: (p: string) => string | undefined): LiteralCheck => ({
  function: fn,
  arg: 0,
  problem,
});

export const regex: Library = {
  overloads: [
    {
      name: "find",
      target: STRING,
      args: [STRING],
      result: STRING,
      impl: (s, [p]) => findAll(s as string, p as string, 1)[0] ?? "",
      cost,
    },
    {
      name: "findAll",
      target: STRING,
      args: [STRING],
      result: listOf(STRING),
      impl: (s, [p]) => findAll(s as string, p as string, -1),
      cost,
    },
    {
      name: "findAll",
      target: STRING,
      args: [STRING, INT],
      result: listOf(STRING),
      impl: (s, [p, n]) => findAll(s as string, p as string, Number(n)),
      cost,
    },
  ],
  literalChecks: [
    literalCheck("matches", re2Problem),
    literalCheck("find", findProblem),
    literalCheck("findAll", findProblem),
  ],
};
