/**
 * Feature gates: the table of known gates and the parsing of `--feature-gates` /
 * `featureGates`, with Kubernetes' semantics for `AllAlpha` and `AllBeta`.
 *
 * @module
 */

import { ConfigError, quote } from "./config_error.ts";
import { parseBool } from "./value_parsers.ts";

/** Maturity of a gated feature. */
export type FeatureStage = "alpha" | "beta" | "ga" | "deprecated";

/** One known feature gate. */
export interface FeatureSpec {
  stage: FeatureStage;
  default: boolean;
  /** GA and deprecated gates may be locked to their default. */
  lockToDefault?: boolean;
  description: string;
}

/** The meta-gate that sets every alpha gate not given explicitly. */
export const ALL_ALPHA = "AllAlpha";
/** The meta-gate that sets every beta gate not given explicitly. */
export const ALL_BETA = "AllBeta";

/** Every gate the server knows, with its stage and default. */
export const FEATURE_GATES: Readonly<Record<string, FeatureSpec>> = {
  [ALL_ALPHA]: {
    stage: "alpha",
    default: false,
    description: "Sets every alpha gate not set explicitly.",
  },
  [ALL_BETA]: {
    stage: "beta",
    default: false,
    description: "Sets every beta gate not set explicitly.",
  },
  WatchList: {
    stage: "alpha",
    default: false,
    description: "Lists streamed by watch (sendInitialEvents).",
  },
  APIResponseCompression: {
    stage: "beta",
    default: true,
    description: "gzip-compressed list and get responses.",
  },
  StructuredAuthenticationConfiguration: {
    stage: "beta",
    default: true,
    description: "AuthenticationConfiguration files.",
  },
  StructuredAuthorizationConfiguration: {
    stage: "beta",
    default: true,
    description: "AuthorizationConfiguration files.",
  },
  AnonymousAuthConfigurableEndpoints: {
    stage: "beta",
    default: true,
    description: "Anonymous access only to listed endpoints.",
  },
};

/** Whether `name` is a known gate. */
export function isKnownFeatureGate(name: string): boolean {
  return Object.hasOwn(FEATURE_GATES, name);
}

/**
 * Check one explicit setting. Throws an Error (message without a source prefix) for an
 * unknown gate or for changing a gate locked to its default.
 */
export function checkFeatureGate(name: string, value: boolean): void {
  const spec = isKnownFeatureGate(name) ? FEATURE_GATES[name] : undefined;
  if (!spec) {
    throw new Error(`unknown feature gate ${quote(name)} (known: ${knownList()})`);
  }
  if (spec.lockToDefault && value !== spec.default) {
    throw new Error(`feature gate ${quote(name)} is locked to ${spec.default}`);
  }
}

/**
 * Parse the flag form `A=true,B=false` into explicit settings (no defaults applied).
 * Repeated names: the last wins.
 *
 * @throws {ConfigError} naming the gate, without a source prefix (the caller adds it).
 * @example
 * ```ts
 * parseFeatureGates("WatchList=true, AllBeta=false"); // Map {WatchList => true, AllBeta => false}
 * ```
 */
export function parseFeatureGates(text: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const item of text.split(",")) {
    const entry = item.trim();
    if (entry === "") continue;
    const eq = entry.indexOf("=");
    if (eq === -1) {
      throw new ConfigError(`missing bool value for ${quote(entry)} (expected ${entry}=true)`);
    }
    const name = entry.slice(0, eq).trim();
    const raw = entry.slice(eq + 1).trim();
    let value: boolean;
    try {
      value = parseBool(raw);
    } catch {
      throw new ConfigError(`${name}: ${quote(raw)} is not a boolean (true or false)`);
    }
    try {
      checkFeatureGate(name, value);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
    out.set(name, value);
  }
  return out;
}

/**
 * Every known gate's effective value: explicit settings first, then `AllAlpha` / `AllBeta`
 * for the alpha / beta gates without an explicit setting (also when set to false, as in
 * Kubernetes), then the gate's default.
 *
 * @example
 * ```ts
 * resolveFeatureGates(new Map([["AllAlpha", true]])).get("WatchList"); // true
 * ```
 */
export function resolveFeatureGates(explicit: ReadonlyMap<string, boolean>): Map<string, boolean> {
  const out = new Map<string, boolean>();
  const allAlpha = explicit.get(ALL_ALPHA);
  const allBeta = explicit.get(ALL_BETA);
  for (const [name, spec] of Object.entries(FEATURE_GATES)) {
    let value = spec.default;
    if (explicit.has(name)) value = explicit.get(name)!;
    else if (spec.stage === "alpha" && allAlpha !== undefined) value = allAlpha;
    else if (spec.stage === "beta" && allBeta !== undefined) value = allBeta;
    out.set(name, value);
  }
  return out;
}

/** `--help` lines describing every gate: name, stage, default, what it gates. */
export function featureGateHelpLines(): string[] {
  const names = Object.keys(FEATURE_GATES).sort();
  const width = Math.max(...names.map((n) => n.length)) + 2;
  return names.map((name) => {
    const s = FEATURE_GATES[name];
    return `  ${name.padEnd(width)}${s.stage.padEnd(6)} ${String(s.default).padEnd(7)}` +
      s.description;
  });
}

function knownList(): string {
  return Object.keys(FEATURE_GATES).sort().join(", ");
}
