/**
 * The protobuf codec's errors: {@link ProtobufError}, the one its callers see, and
 * {@link EncodeFailure}, the encoder's internal record of a wrongly typed value and where it is.
 */

import type { GroupVersionKind } from "./types.ts";

/** A malformed protobuf input (the HTTP layer answers it with 400). */
export class ProtobufError extends Error {
  override name = "ProtobufError";
}

/** The error for a type that has no protobuf encoding (`type` undefined: the body names none). */
export function noProtobufEncoding(
  action: "encode" | "decode",
  type: GroupVersionKind | undefined,
): ProtobufError {
  return new ProtobufError(
    `Cannot ${action} protobuf: kind "${type?.kind ?? ""}" in apiVersion "${
      type?.apiVersion ?? ""
    }" has no protobuf encoding`,
  );
}

/**
 * A wrongly typed value. Thrown where it is found with an empty path; every enclosing field
 * prepends its part on the way out (so the happy path builds no path strings), and
 * {@link encodeError} turns it into the {@link ProtobufError}.
 */
export class EncodeFailure {
  constructor(public path: string, readonly expected: string, readonly shown: string) {}
}

/** Throws the {@link EncodeFailure} of a value that is not `expected`. */
export function fail(expected: string, got: unknown): never {
  throw new EncodeFailure("", expected, shownType(got));
}

/** How an {@link EncodeFailure} names the JSON type of the value it got. */
export function shownType(got: unknown): string {
  return got === null ? "null" : Array.isArray(got) ? "an array" : typeof got;
}

/** Prepends a path part (made only on failure) to an {@link EncodeFailure}; returns `e`. */
export function prefixed(e: unknown, part: () => string): unknown {
  if (e instanceof EncodeFailure) e.path = part() + e.path;
  return e;
}

/** What an error met while encoding an object of `kind` is thrown as. */
export function encodeError(kind: string, e: unknown): unknown {
  return e instanceof EncodeFailure
    ? new ProtobufError(
      `Cannot encode protobuf: ${kind}${e.path} must be ${e.expected}, got ${e.shown}`,
    )
    : e;
}
