/**
 * Test fixtures for the protobuf codec's tests: Kubernetes' round-trip fixtures, hex dumps and
 * an assertion on the type and message of what a function throws.
 *
 * @module
 */

import { assert } from "../../../tests/assert.ts";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type JsonObject, toPlatformApiVersion } from "./mod.ts";

export const FIXTURES = fileURLToPath(
  new URL("../../../testdata/k8s-api-testdata/", import.meta.url),
);

export function fixture(file: string): { json: JsonObject; pb: Uint8Array } {
  const json = JSON.parse(readFileSync(`${FIXTURES}${file}.json`, "utf8"));
  if (typeof json.apiVersion === "string") json.apiVersion = toPlatformApiVersion(json.apiVersion);
  return { json, pb: new Uint8Array(readFileSync(`${FIXTURES}${file}.pb`)) };
}

/** Asserts that `fn` throws an instance of `type` whose message contains `includes`. */
export function assertThrows(
  fn: () => unknown,
  type: new (...args: never[]) => Error,
  includes = "",
): void {
  try {
    fn();
  } catch (e) {
    assert(e instanceof type, `expected ${type.name}, got ${e}`);
    assert(e.message.includes(includes), `"${e.message}" does not contain "${includes}"`);
    return;
  }
  throw new Error("expected an exception");
}

export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
