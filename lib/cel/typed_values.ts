/**
 * JSON values as CEL sees them through a static type (one made from a schema): integers become
 * int, `date-time` and `date` strings timestamps, `duration` strings durations, `byte` strings
 * bytes, and an object shows only the fields its type declares (an open object shows all).
 * A value that does not have its declared type is converted as it is and reported, so that the
 * caller can say the object is invalid instead of running rules on it.
 */

import { celEnv, type CelInput, isCelError, parse, plan } from "@bufbuild/cel";
import { wrapOptional } from "./libraries/optional.ts";
import type { Type } from "./types.ts";
import { PreparedCelValue, toCelInput } from "./values.ts";

/** The result of {@link prepareValue}: pass `value` as a variable. */
export interface Prepared {
  value: PreparedCelValue;
  /** Where the value does not have its declared type (empty when it does). */
  mismatches: string[];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) &&
    !(v instanceof Uint8Array);
}

/** `value` typed by `t`, ready to bind to a variable. */
export function prepareValue(value: unknown, t: Type): Prepared {
  const mismatches: string[] = [];
  return { value: new PreparedCelValue(convert(value, t, "self", mismatches)), mismatches };
}

/** An optional of a prepared value, or none (`oldSelf` of a rule with optionalOldSelf). */
export function prepareOptional(prepared: Prepared | undefined): PreparedCelValue {
  return new PreparedCelValue(wrapOptional(prepared?.value.input as never));
}

function convert(value: unknown, t: Type, path: string, bad: string[]): CelInput {
  if (value === null || value === undefined) return null;
  const loose = () => toCelInput(value, path);
  const mismatch = () => {
    bad.push(path);
    return loose();
  };
  switch (t.kind) {
    case "scalar":
      switch (t.name) {
        case "int":
          if (typeof value === "bigint") return value;
          return typeof value === "number" && Number.isInteger(value) ? BigInt(value) : mismatch();
        case "double":
          if (typeof value === "bigint") return Number(value);
          return typeof value === "number" ? value : mismatch();
        case "bool":
          return typeof value === "boolean" ? value : mismatch();
        case "string":
          return typeof value === "string" ? value : mismatch();
        case "bytes":
          return typeof value === "string" ? decodeBase64(value) ?? mismatch() : mismatch();
        case "google.protobuf.Timestamp":
          return typeof value === "string" ? timestamp(value) ?? mismatch() : mismatch();
        case "google.protobuf.Duration":
          return typeof value === "string" ? standard("duration", value) ?? mismatch() : mismatch();
        default:
          return loose();
      }
    case "list":
      if (!Array.isArray(value)) return mismatch();
      return value.map((v, i) => convert(v, t.elem, `${path}[${i}]`, bad));
    case "map": {
      if (!isPlainObject(value)) return mismatch();
      const out = new Map<string, CelInput>();
      for (const [k, v] of Object.entries(value)) {
        if (v !== undefined) out.set(k, convert(v, t.value, `${path}.${k}`, bad));
      }
      return out;
    }
    case "object": {
      if (!isPlainObject(value)) return mismatch();
      const out = new Map<string, CelInput>();
      for (const [k, v] of Object.entries(value)) {
        if (v === undefined) continue;
        const sub = t.fields[k];
        if (sub !== undefined) out.set(k, convert(v, sub, `${path}.${k}`, bad));
        else if (t.open) out.set(k, toCelInput(v, `${path}.${k}`));
      }
      return out;
    }
    default:
      return loose();
  }
}

/** The standard conversions need an evaluation context: each runs as a tiny program, planned
 * when first needed (not at start-up). */
const conversions = new Map<string, ReturnType<typeof plan>>();

function standard(fn: "timestamp" | "duration", arg: string): CelInput | undefined {
  let program = conversions.get(fn);
  if (program === undefined) {
    program = plan(celEnv(), parse(`${fn}(s)`));
    conversions.set(fn, program);
  }
  const result = program({ s: arg });
  return isCelError(result) ? undefined : result as CelInput;
}

/** RFC 3339 date-times, and full dates (midnight UTC), as CEL timestamps. */
function timestamp(s: string): CelInput | undefined {
  return standard("timestamp", /^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
}

function decodeBase64(s: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}
