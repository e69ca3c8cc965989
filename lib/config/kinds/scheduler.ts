/**
 * KubeSchedulerConfiguration (`scheduler.config.platform.io/v1`, kube's
 * `kubescheduler.config.k8s.io/v1`): the scheduler's settings, its profiles (plugin sets per
 * extension point and plugin arguments) and its extenders. Defaults are kube's v1 defaults
 * (parallelism 16, backoff 1s to 10s, one `default-scheduler` profile, the default plugins
 * under `multiPoint` and the default arguments of every enabled plugin that takes some);
 * validation is kube's `ValidateKubeSchedulerConfiguration`.
 *
 * @module
 */

import { z } from "zod";
import { isQualifiedName } from "../../api/mod.ts";
import {
  child,
  clientConnectionSchema,
  type ConfigKind,
  defaultClientConnection,
  defaultLeaderElection,
  duration,
  type FieldErrors,
  int32,
  int64,
  kindCheck,
  leaderElectionSchema,
  normalDuration,
  type Obj,
  validateClientConnection,
  validateLeaderElection,
} from "./common.ts";
import { checkPluginArgs, PLUGIN_ARGS, SCHEDULER_API_VERSIONS } from "./scheduler_plugin_args.ts";

export const SCHEDULER_KIND = "KubeSchedulerConfiguration";
export const DEFAULT_SCHEDULER_NAME = "default-scheduler";

/** The extension points of a profile's `plugins`, in kube's order. */
export const EXTENSION_POINTS = [
  "multiPoint",
  "preEnqueue",
  "queueSort",
  "preFilter",
  "filter",
  "postFilter",
  "preScore",
  "score",
  "reserve",
  "permit",
  "preBind",
  "bind",
  "postBind",
] as const;

/** kube's default plugins (v1), all under `multiPoint`, with their score weights. */
const DEFAULT_PLUGINS: readonly { name: string; weight?: number }[] = [
  { name: "SchedulingGates" },
  { name: "PrioritySort" },
  { name: "NodeUnschedulable" },
  { name: "NodeName" },
  { name: "TaintToleration", weight: 3 },
  { name: "NodeAffinity", weight: 2 },
  { name: "NodePorts" },
  { name: "NodeResourcesFit", weight: 1 },
  { name: "VolumeRestrictions" },
  { name: "NodeVolumeLimits" },
  { name: "VolumeBinding" },
  { name: "VolumeZone" },
  { name: "PodTopologySpread", weight: 2 },
  { name: "InterPodAffinity", weight: 2 },
  { name: "DefaultPreemption" },
  { name: "NodeResourcesBalancedAllocation", weight: 1 },
  { name: "ImageLocality", weight: 1 },
  { name: "DefaultBinder" },
];

/** Plugins removed before v1: naming one is an error. */
const REMOVED_PLUGINS = ["AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"];

const plugin = z.strictObject({ name: z.string(), weight: int32.optional() });
const pluginSet = z.strictObject({
  enabled: z.array(plugin).optional(),
  disabled: z.array(plugin).optional(),
});
type PluginSet = z.infer<typeof pluginSet>;

const profileSchema = z.strictObject({
  schedulerName: z.string().optional(),
  percentageOfNodesToScore: int32.nullish(),
  plugins: z.strictObject(
    Object.fromEntries(EXTENSION_POINTS.map((p) => [p, pluginSet.optional()])) as Record<
      typeof EXTENSION_POINTS[number],
      z.ZodOptional<typeof pluginSet>
    >,
  ).optional(),
  pluginConfig: z.array(z.strictObject({
    name: z.string(),
    args: z.record(z.string(), z.unknown()).nullish(),
  })).optional(),
});
type Profile = z.infer<typeof profileSchema>;

const extenderSchema = z.strictObject({
  urlPrefix: z.string().optional(),
  filterVerb: z.string().optional(),
  preemptVerb: z.string().optional(),
  prioritizeVerb: z.string().optional(),
  weight: int64.optional(),
  bindVerb: z.string().optional(),
  enableHTTPS: z.boolean().optional(),
  tlsConfig: z.strictObject({
    insecure: z.boolean().optional(),
    serverName: z.string().optional(),
    certFile: z.string().optional(),
    keyFile: z.string().optional(),
    caFile: z.string().optional(),
    certData: z.string().optional(),
    keyData: z.string().optional(),
    caData: z.string().optional(),
  }).nullish(),
  httpTimeout: duration.optional(),
  nodeCacheCapable: z.boolean().optional(),
  managedResources: z.array(z.strictObject({
    name: z.string(),
    ignoredByScheduler: z.boolean().optional(),
  })).optional(),
  ignorable: z.boolean().optional(),
});
type Extender = z.infer<typeof extenderSchema>;

const schedulerSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  parallelism: int32.nullish(),
  leaderElection: leaderElectionSchema.optional(),
  clientConnection: clientConnectionSchema.optional(),
  enableProfiling: z.boolean().nullish(),
  enableContentionProfiling: z.boolean().nullish(),
  percentageOfNodesToScore: int32.nullish(),
  podInitialBackoffSeconds: int64.nullish(),
  podMaxBackoffSeconds: int64.nullish(),
  profiles: z.array(profileSchema).optional(),
  extenders: z.array(extenderSchema).optional(),
  delayCacheUntilActive: z.boolean().optional(),
});
type SchedulerConfig = z.infer<typeof schedulerSchema>;

// ---------------------------------------------------------------------------------------
// Defaults

/**
 * kube's mergePluginSet for `multiPoint`: the defaults not disabled (by name, or all with
 * `*`), a default the profile enables again taking the profile's weight in its place, then
 * the profile's other plugins in its order.
 */
function mergeMultiPoint(custom: PluginSet | undefined): Obj {
  const disabled = new Set((custom?.disabled ?? []).map((p) => p.name));
  const enabled = custom?.enabled ?? [];
  const replaced = new Set<string>();
  const out: Obj[] = [];
  if (!disabled.has("*")) {
    for (const d of DEFAULT_PLUGINS) {
      if (disabled.has(d.name)) continue;
      const again = enabled.find((p) => p.name === d.name);
      if (again) replaced.add(d.name);
      out.push(pluginEntry(again ?? d));
    }
  }
  for (const p of enabled) if (!replaced.has(p.name)) out.push(pluginEntry(p));
  return { enabled: out, ...(custom?.disabled ? { disabled: custom.disabled } : {}) };
}

function pluginEntry(p: { name: string; weight?: number }): Obj {
  return p.weight === undefined ? { name: p.name } : { name: p.name, weight: p.weight };
}

function defaultProfile(p: Profile, apiVersion: string): Obj {
  const plugins: Obj = { multiPoint: mergeMultiPoint(p.plugins?.multiPoint) };
  for (const point of EXTENSION_POINTS.slice(1)) {
    const set = p.plugins?.[point];
    if (set) plugins[point] = set;
  }
  // Every enabled plugin that takes typed arguments and has no entry gets its defaults.
  const pluginConfig: Obj[] = (p.pluginConfig ?? []).map((c) => ({ name: c.name, args: c.args }));
  const configured = new Set(pluginConfig.map((c) => c.name));
  for (const point of EXTENSION_POINTS) {
    for (const e of ((plugins[point] as Obj | undefined)?.enabled ?? []) as Obj[]) {
      const spec = PLUGIN_ARGS.get(e.name as string);
      if (!spec || configured.has(spec.plugin)) continue;
      configured.add(spec.plugin);
      pluginConfig.push({
        name: spec.plugin,
        args: { apiVersion, kind: spec.kind, ...spec.defaults({}) },
      });
    }
  }
  return {
    schedulerName: p.schedulerName || DEFAULT_SCHEDULER_NAME,
    ...(p.percentageOfNodesToScore == null ? {} : {
      percentageOfNodesToScore: p.percentageOfNodesToScore,
    }),
    plugins,
    pluginConfig,
  };
}

function defaultExtender(e: Extender): Obj {
  return {
    ...e,
    ...(e.httpTimeout === undefined ? {} : { httpTimeout: normalDuration(e.httpTimeout) }),
  };
}

function defaultScheduler(c: SchedulerConfig): Obj {
  const profiling = c.enableProfiling ?? true;
  return {
    apiVersion: c.apiVersion,
    kind: c.kind,
    parallelism: c.parallelism ?? 16,
    leaderElection: defaultLeaderElection(c.leaderElection, {
      resourceName: "kube-scheduler",
      resourceNamespace: "kube-system",
    }),
    clientConnection: defaultClientConnection(c.clientConnection, { qps: 50, burst: 100 }),
    enableProfiling: profiling,
    enableContentionProfiling: c.enableContentionProfiling ?? profiling,
    percentageOfNodesToScore: c.percentageOfNodesToScore ?? 0,
    podInitialBackoffSeconds: c.podInitialBackoffSeconds ?? 1,
    podMaxBackoffSeconds: c.podMaxBackoffSeconds ?? 10,
    profiles: (c.profiles?.length ? c.profiles : [{}]).map((p) => defaultProfile(p, c.apiVersion)),
    extenders: (c.extenders ?? []).map(defaultExtender),
    delayCacheUntilActive: c.delayCacheUntilActive ?? false,
  };
}

// ---------------------------------------------------------------------------------------
// Validation

function validatePercentage(value: unknown, path: string, errs: FieldErrors): void {
  if (typeof value === "number" && (value < 0 || value > 100)) {
    errs.invalid(path, value, "not in valid range [0-100]");
  }
}

function removedPlugin(name: string, path: string, apiVersion: string, errs: FieldErrors): void {
  if (!REMOVED_PLUGINS.includes(name)) return;
  errs.invalid(
    path,
    name,
    `was invalid in version ${JSON.stringify(SCHEDULER_API_VERSIONS[1])} ` +
      `(KubeSchedulerConfiguration is version ${JSON.stringify(apiVersion)})`,
  );
}

function validateProfile(
  p: Obj,
  i: number,
  ctx: { root: Obj; apiVersion: string },
  errs: FieldErrors,
): void {
  const path = `profiles[${i}]`;
  validatePercentage(p.percentageOfNodesToScore, child(path, "percentageOfNodesToScore"), errs);
  const plugins = p.plugins as Obj;
  for (const point of EXTENSION_POINTS) {
    const enabled = ((plugins[point] as Obj | undefined)?.enabled ?? []) as Obj[];
    enabled.forEach((e, j) =>
      removedPlugin(
        e.name as string,
        `${path}.plugins.${point}.enabled[${j}]`,
        ctx.apiVersion,
        errs,
      )
    );
  }
  const seen = new Set<string>();
  (p.pluginConfig as Obj[]).forEach((c, j) => {
    const at = `${path}.pluginConfig[${j}]`;
    const name = c.name as string;
    if (seen.has(name)) errs.duplicate(at, name);
    seen.add(name);
    if (REMOVED_PLUGINS.includes(name)) return removedPlugin(name, at, ctx.apiVersion, errs);
    const spec = PLUGIN_ARGS.get(name);
    if (!spec || c.args == null) return;
    const { apiVersion, kind, ...args } = c.args as Obj;
    if (
      (kind !== undefined && kind !== spec.kind) ||
      (apiVersion !== undefined && !SCHEDULER_API_VERSIONS.includes(apiVersion as never))
    ) {
      errs.invalid(`${at}.args`, c.args, "has to match plugin args");
      return;
    }
    const defaulted = checkPluginArgs(spec, args, {
      root: ctx.root,
      prefix: ["profiles", i, "pluginConfig", j, "args"],
      path: `${at}.args`,
    }, errs);
    if (defaulted) {
      c.args = { apiVersion: apiVersion ?? ctx.apiVersion, kind: spec.kind, ...defaulted };
    }
  });
}

/** kube's validateCommonQueueSort: one queue sort, the same in every profile. */
function validateQueueSort(profiles: Obj[], errs: FieldErrors): void {
  const queueSort = (p: Obj) => ((p.plugins as Obj).queueSort ?? {}) as Obj;
  const canon = queueSort(profiles[0]);
  const enabled = (canon.enabled ?? []) as Obj[];
  if (enabled.length > 1) {
    errs.invalid(
      "profiles[0].plugins.queueSort.Enabled",
      enabled.length,
      "only one queue sort plugin can be enabled",
    );
  }
  const name = enabled[0]?.name;
  const argsOf = (p: Obj) => ((p.pluginConfig as Obj[]).find((c) => c.name === name))?.args;
  const canonArgs = JSON.stringify(argsOf(profiles[0]) ?? null);
  for (let i = 1; i < profiles.length; i++) {
    const curr = queueSort(profiles[i]);
    if (JSON.stringify(curr) !== JSON.stringify(canon)) {
      errs.invalid(`profiles[${i}].plugins.queueSort`, curr, "must be the same for all profiles");
    }
    const args = argsOf(profiles[i]);
    if (name !== undefined && args !== undefined && JSON.stringify(args) !== canonArgs) {
      errs.invalid(
        `profiles[${i}].pluginConfig.args`,
        args,
        "queueSort must be the same for all profiles",
      );
    }
  }
}

/** kube's IsExtendedResourceName: a domain-prefixed name outside `kubernetes.io/`. */
function extendedResourceProblem(name: string): string[] {
  const qualified = isQualifiedName(name);
  if (qualified.length > 0) return qualified;
  const native = !name.includes("/") || name.includes("kubernetes.io/");
  if (native || name.startsWith("requests.") || isQualifiedName(`requests.${name}`).length > 0) {
    return ["is an invalid extended resource name"];
  }
  return [];
}

function validateExtenders(extenders: Obj[], errs: FieldErrors): void {
  let binders = 0;
  const managed = new Set<string>();
  extenders.forEach((e, i) => {
    const path = `extenders[${i}]`;
    if (e.prioritizeVerb && ((e.weight as number | undefined) ?? 0) <= 0) {
      errs.invalid(`${path}.weight`, e.weight ?? 0, "must have a positive weight applied to it");
    }
    if (e.bindVerb) binders++;
    ((e.managedResources ?? []) as Obj[]).forEach((r, j) => {
      const at = `${path}.managedResources[${j}].name`;
      const name = r.name as string;
      for (const msg of extendedResourceProblem(name)) errs.invalid(at, name, msg);
      if (managed.has(name)) errs.invalid(at, name, "duplicate extender managed resource name");
      managed.add(name);
    });
  });
  if (binders > 1) {
    errs.invalid(
      "extenders",
      `found ${binders} extenders implementing bind`,
      "only one extender can implement bind",
    );
  }
}

function validateScheduler(c: Obj, errs: FieldErrors, root: Obj): void {
  validateClientConnection(c.clientConnection as Obj, "clientConnection", errs);
  validateLeaderElection(c.leaderElection as Obj, "leaderElection", errs);
  if ((c.parallelism as number) <= 0) {
    errs.invalid("parallelism", c.parallelism, "should be an integer value greater than zero");
  }
  const profiles = c.profiles as Obj[];
  const names = new Map<string, number>();
  profiles.forEach((p, i) => {
    validateProfile(p, i, { root, apiVersion: c.apiVersion as string }, errs);
    const name = p.schedulerName as string;
    const first = names.get(name);
    if (first !== undefined) {
      errs.duplicate(`profiles[${i}].schedulerName`, `profiles[${first}].schedulerName`);
    } else names.set(name, i);
  });
  validateQueueSort(profiles, errs);
  validatePercentage(c.percentageOfNodesToScore, "percentageOfNodesToScore", errs);
  const initial = c.podInitialBackoffSeconds as number;
  if (initial <= 0) errs.invalid("podInitialBackoffSeconds", initial, "must be greater than 0");
  if ((c.podMaxBackoffSeconds as number) < initial) {
    errs.invalid(
      "podMaxBackoffSeconds",
      c.podMaxBackoffSeconds,
      "must be greater than or equal to PodInitialBackoffSeconds",
    );
  }
  validateExtenders(c.extenders as Obj[], errs);
}

export const schedulerKind: ConfigKind = {
  kind: SCHEDULER_KIND,
  apiVersions: SCHEDULER_API_VERSIONS,
  check: (doc) =>
    kindCheck(schedulerSchema, defaultScheduler, (c, errs) => validateScheduler(c, errs, doc))(doc),
};
