/** The three assertions the black-box tests use, on node:assert/strict. */

import nodeAssert from "node:assert/strict";

export function assert(cond: unknown, message?: string): asserts cond {
  nodeAssert.ok(cond, message);
}

export function assertEquals<T>(actual: unknown, expected: T, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

export function assertMatch(actual: string, re: RegExp, message?: string): void {
  nodeAssert.match(actual, re, message);
}
