/**
 * Feature gates: the table of known gates and the parsing of `--feature-gates` /
 * `featureGates`, with Kubernetes' semantics and messages (component-base's featuregate):
 * `AllAlpha` / `AllBeta`, gates locked to their default, warnings for setting a GA or
 * deprecated gate.
 *
 * The table holds the gates kube-apiserver has, at the stage they have in the Kubernetes
 * version the server reports (1.32, lib/server/version.ts), for features this server
 * implements. Each one either changes what the server does when switched or is locked to its
 * default (GA, and deprecated gates kube locked), so that setting it the other way is refused.
 *
 * @module
 */

import { ConfigError } from "./config_error.ts";

/** Maturity of a gated feature. */
export type FeatureStage = "alpha" | "beta" | "ga" | "deprecated";

/** One known feature gate. */
export interface FeatureSpec {
  stage: FeatureStage;
  default: boolean;
  /** Setting the other value is refused (GA gates, and deprecated gates kube locked). */
  lockToDefault?: boolean;
  description: string;
}

/** The meta-gate that sets every alpha gate not given explicitly. */
export const ALL_ALPHA = "AllAlpha";
/** The meta-gate that sets every beta gate not given explicitly. */
export const ALL_BETA = "AllBeta";

const ga = (description: string): FeatureSpec => ({
  stage: "ga",
  default: true,
  lockToDefault: true,
  description,
});

/** Every gate the server knows, with its stage and default (kube 1.32's). */
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
  AdmissionWebhookMatchConditions: ga("CEL matchConditions on admission webhooks."),
  AggregatedDiscoveryEndpoint: ga("Aggregated discovery (apidiscovery.k8s.io/v2)."),
  AllowServiceLBStatusOnNonLB: {
    stage: "deprecated",
    default: false,
    lockToDefault: true,
    description: "Non-operational: status.loadBalancer.ingress only on LoadBalancer Services.",
  },
  AllowUnsafeMalformedObjectDeletion: {
    stage: "alpha",
    default: false,
    description: "A DELETE may remove an object the server cannot read (an unsafe delete).",
  },
  AnonymousAuthConfigurableEndpoints: {
    stage: "beta",
    default: true,
    description: "Anonymous access only to listed endpoints (anonymous.conditions).",
  },
  APIListChunking: ga("Lists in chunks (limit and continue)."),
  APIResponseCompression: {
    stage: "beta",
    default: true,
    description: "gzip-compressed list and get responses.",
  },
  APIServerTracing: {
    stage: "beta",
    default: true,
    description: "Request spans exported as --tracing-config-file says.",
  },
  RemainingItemCount: ga("remainingItemCount in the metadata of a chunked list."),
  RetryGenerateName: ga("A create with generateName retries on a name collision."),
  ServiceAccountTokenJTI: ga("Service account tokens carry a jti (credential-id)."),
  StructuredAuthenticationConfiguration: {
    stage: "beta",
    default: true,
    description: "AuthenticationConfiguration files (--authentication-config).",
  },
  StructuredAuthorizationConfiguration: ga(
    "AuthorizationConfiguration files (--authorization-config).",
  ),
  WatchBookmark: ga("BOOKMARK events on watches that ask (allowWatchBookmarks)."),
  WatchList: {
    stage: "beta",
    default: true,
    description: "Lists streamed by watch (sendInitialEvents).",
  },
};

/** Whether `name` is a known gate. */
export function isKnownFeatureGate(name: string): boolean {
  return Object.hasOwn(FEATURE_GATES, name);
}

/**
 * Check one explicit setting. Throws an Error (kube's message, without a source prefix) for
 * an unknown gate or for changing a gate locked to its default.
 *
 * @example
 * ```ts
 * checkFeatureGate("Nope", true); // throws "unrecognized feature gate: Nope"
 * ```
 */
export function checkFeatureGate(name: string, value: boolean): void {
  const spec = isKnownFeatureGate(name) ? FEATURE_GATES[name] : undefined;
  if (!spec) throw new Error(`unrecognized feature gate: ${name}`);
  if (spec.lockToDefault && value !== spec.default) {
    throw new Error(
      `cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`,
    );
  }
}

/**
 * Check every explicit setting of a map (as `startServer` takes it).
 *
 * @throws {ConfigError} `--feature-gates: <kube's message>` for the first bad one.
 */
export function checkFeatureGates(explicit: ReadonlyMap<string, boolean>): void {
  for (const [name, value] of explicit) {
    try {
      checkFeatureGate(name, value);
    } catch (err) {
      throw new ConfigError(`--feature-gates: ${(err as Error).message}`);
    }
  }
}

/**
 * Parse the flag form `A=true,B=false` into explicit settings (no defaults applied).
 * Repeated names: the last wins. Values are Go's `strconv.ParseBool` spellings.
 *
 * @throws {ConfigError} with kube's message, without a source prefix (the caller adds it).
 * @example
 * ```ts
 * parseFeatureGates("WatchList=false, AllBeta=false"); // Map {WatchList => false, AllBeta => false}
 * ```
 */
export function parseFeatureGates(text: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const eq = item.indexOf("=");
    const name = (eq === -1 ? item : item.slice(0, eq)).trim();
    if (eq === -1) throw new ConfigError(`missing bool value for ${name}`);
    const raw = item.slice(eq + 1).trim();
    const value = GO_BOOLS[raw];
    if (value === undefined) {
      throw new ConfigError(
        `invalid value of ${name}=${raw}, err: strconv.ParseBool: parsing "${raw}": ` +
          "invalid syntax",
      );
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

/** What Go's strconv.ParseBool accepts. */
const GO_BOOLS: Record<string, boolean> = {
  "1": true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  "0": false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
};

/**
 * The warnings kube logs for explicit settings of GA and deprecated gates, one per gate,
 * in the order given.
 *
 * @example
 * ```ts
 * featureGateWarnings(new Map([["APIListChunking", true]]));
 * // ["Setting GA feature gate APIListChunking=true. It will be removed in a future release."]
 * ```
 */
export function featureGateWarnings(explicit: ReadonlyMap<string, boolean>): string[] {
  const out: string[] = [];
  for (const [name, value] of explicit) {
    const stage = isKnownFeatureGate(name) ? FEATURE_GATES[name].stage : undefined;
    const what = stage === "deprecated" ? "deprecated" : stage === "ga" ? "GA" : undefined;
    if (what) {
      out.push(
        `Setting ${what} feature gate ${name}=${value}. It will be removed in a future release.`,
      );
    }
  }
  return out;
}

/** Files given by flags that need a feature gate to be on. */
export interface GatedFiles {
  /** `--authentication-config`: StructuredAuthenticationConfiguration. */
  authenticationConfig?: string;
  /** `--tracing-config-file`: APIServerTracing. */
  tracingConfig?: string;
}

/**
 * Refuse a file whose feature gate is off, as `serve` and `check-config` both do.
 *
 * @throws {ConfigError} naming the flag; for the tracing file in kube's words.
 */
export function checkGatedFiles(files: GatedFiles, gates: ReadonlyMap<string, boolean>): void {
  if (files.tracingConfig !== undefined && !gates.get("APIServerTracing")) {
    throw new ConfigError(
      "--tracing-config-file: APIServerTracing feature is not enabled, but tracing config " +
        "file was provided",
    );
  }
  if (
    files.authenticationConfig !== undefined && !gates.get("StructuredAuthenticationConfiguration")
  ) {
    throw new ConfigError(
      "--authentication-config: needs the StructuredAuthenticationConfiguration feature gate, " +
        "which is off",
    );
  }
}

/**
 * Every known gate's effective value: explicit settings first, then `AllAlpha` / `AllBeta`
 * for the alpha / beta gates without an explicit setting (also when set to false, as in
 * Kubernetes), then the gate's default.
 *
 * @example
 * ```ts
 * resolveFeatureGates(new Map([["AllBeta", false]])).get("WatchList"); // false
 * ```
 */
export function resolveFeatureGates(explicit: ReadonlyMap<string, boolean>): Map<string, boolean> {
  const out = new Map<string, boolean>();
  const allAlpha = explicit.get(ALL_ALPHA);
  const allBeta = explicit.get(ALL_BETA);
  for (const [name, spec] of Object.entries(FEATURE_GATES)) {
    let value = spec.default;
    if (explicit.has(name)) value = explicit.get(name)!;
    else if (name === ALL_ALPHA || name === ALL_BETA) value = spec.default;
    else if (spec.stage === "alpha" && allAlpha !== undefined) value = allAlpha;
    else if (spec.stage === "beta" && allBeta !== undefined) value = allBeta;
    out.set(name, value);
  }
  return out;
}

/**
 * A gate's stage as kube spells it in the `stage` label of `kubernetes_feature_enabled`
 * (`ALPHA`, `BETA`, `DEPRECATED`; GA is the empty string).
 */
export function featureGateStageLabel(name: string): string {
  const stage = FEATURE_GATES[name].stage;
  return stage === "ga" ? "" : STAGE_LABEL[stage];
}

const STAGE_LABEL: Record<FeatureStage, string> = {
  alpha: "ALPHA",
  beta: "BETA",
  ga: "GA",
  deprecated: "DEPRECATED",
};

/**
 * `--help` lines, one per gate in kube's form (`Name=true|false (BETA - default=true)`), with
 * what it gates; locked gates say so. Unlike kube, GA and deprecated gates are listed too.
 */
export function featureGateHelpLines(): string[] {
  const names = Object.keys(FEATURE_GATES).sort();
  return names.flatMap((name) => {
    const s = FEATURE_GATES[name];
    const locked = s.lockToDefault ? `, locked to ${s.default}` : "";
    return [
      `  ${name}=true|false (${STAGE_LABEL[s.stage]} - default=${s.default}${locked})`,
      `      ${s.description}`,
    ];
  });
}
