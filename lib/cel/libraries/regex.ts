/**
 * Kubernetes' regex library: `s.find(re)` (the first match, or "") and `s.findAll(re[, n])`
 * (non-overlapping matches, at most n when n >= 0), with Go's rules for empty matches.
 * Patterns are RE2, run by re2js (a port of Go's regexp that reports where matches are) in time
 * linear in the input: no pattern can backtrack catastrophically.
 */

import type { CelValue } from "@bufbuild/cel";
import { RE2JS } from "re2js";
import { regexCost } from "../cost.ts";
import type { Library, LiteralCheck } from "../library.ts";
import { callStandard } from "../standard.ts";
import { INT, listOf, STRING } from "../types.ts";

/** An RE2 syntax error in a pattern for `matches` (run by @bufbuild/re2), or undefined. */
export function re2Problem(pattern: string): string | undefined {
  try {
    callStandard("matches", "", [pattern]);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** re2js's port of Go's `regexp.Regexp`, with its `FindString` and `FindAllString`. */
type Regexp = ReturnType<RE2JS["re2"]>;

const compiled = new Map<string, Regexp>();
const MAX_COMPILED = 256;

function regexp(pattern: string): Regexp {
  let re = compiled.get(pattern);
  if (re === undefined) {
    re = RE2JS.compile(pattern).re2();
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(pattern, re);
  }
  return re;
}

/** Why find/findAll cannot run a pattern, or undefined. */
function findProblem(pattern: string): string | undefined {
  try {
    regexp(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The leftmost match of `pattern` in `input`, or "" when there is none (Go's FindString). */
export function find(input: string, pattern: string): string {
  return regexp(pattern).find(input) as string;
}

/** The matches of `pattern` in `input`, all of them when `limit` is negative (FindAllString). */
export function findAll(input: string, pattern: string, limit: number): string[] {
  return (regexp(pattern).findAll(input, limit) as string[] | null) ?? [];
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
      impl: (s, [p]) => find(s as string, p as string),
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
