/**
 * The scheduler plugins' argument kinds (`scheduler.config.platform.io/v1`, kube's
 * `kubescheduler.config.k8s.io/v1`): DefaultPreemptionArgs, InterPodAffinityArgs,
 * NodeAffinityArgs, NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs,
 * PodTopologySpreadArgs and VolumeBindingArgs, each with kube's v1 defaults and its
 * validation (`validation_pluginargs.go`). They are read alone, as kinds of their own, or as
 * the `args` of a profile's `pluginConfig` entry (`scheduler.ts`).
 *
 * @module
 */

import { z } from "zod";
import { isQualifiedName } from "../../api/mod.ts";
import {
  child,
  type ConfigKind,
  FieldErrors,
  int32,
  int64,
  type Obj,
  parseShape,
} from "./common.ts";

export const SCHEDULER_API_VERSIONS = [
  "scheduler.config.platform.io/v1",
  "kubescheduler.config.k8s.io/v1",
] as const;

/** One plugin's arguments: the fields, their defaults and kube's validation. */
export interface PluginArgs {
  /** The plugin's name (`DefaultPreemption`); the kind is the name and `Args`. */
  plugin: string;
  kind: string;
  // deno-lint-ignore no-explicit-any
  fields: z.ZodObject<any>;
  defaults(args: Obj): Obj;
  validate(args: Obj, path: string, errs: FieldErrors): void;
}

const resourceSpec = z.strictObject({ name: z.string().optional(), weight: int64.optional() });
const shapePoint = z.strictObject({ utilization: int32.optional(), score: int32.optional() });
const CPU_MEMORY = [{ name: "cpu", weight: 1 }, { name: "memory", weight: 1 }];

function defaultResources(list: Obj[] | undefined): Obj[] {
  if (!list || list.length === 0) return structuredClone(CPU_MEMORY);
  return list.map((r) => ({ name: r.name ?? "", weight: r.weight || 1 }));
}

function validateLabelName(value: string, path: string, errs: FieldErrors): void {
  for (const msg of isQualifiedName(value)) errs.invalid(path, value, msg);
}

/** kube's validateFunctionShape: points sorted by utilization, within the ranges. */
function validateShape(shape: Obj[], path: string, errs: FieldErrors): void {
  if (shape.length === 0) {
    errs.required(path, "at least one point must be specified");
    return;
  }
  for (let i = 1; i < shape.length; i++) {
    if ((shape[i - 1].utilization as number) >= (shape[i].utilization as number)) {
      errs.invalid(
        child(child(path, i), "utilization"),
        shape[i].utilization,
        "values must be sorted in increasing order",
      );
      break;
    }
  }
  shape.forEach((p, i) => {
    const u = p.utilization as number;
    const s = p.score as number;
    if (u < 0 || u > 100) {
      errs.invalid(child(child(path, i), "utilization"), u, "not in valid range [0, 100]");
    }
    if (s < 0 || s > 10) {
      errs.invalid(child(child(path, i), "score"), s, "not in valid range [0, 10]");
    }
  });
}

const shapeDefaults = (shape: Obj[]) =>
  shape.map((p) => ({ utilization: p.utilization ?? 0, score: p.score ?? 0 }));

const defaultPreemption: PluginArgs = {
  plugin: "DefaultPreemption",
  kind: "DefaultPreemptionArgs",
  fields: z.strictObject({
    minCandidateNodesPercentage: int32.optional(),
    minCandidateNodesAbsolute: int32.optional(),
  }),
  defaults: (a) => ({
    minCandidateNodesPercentage: a.minCandidateNodesPercentage ?? 10,
    minCandidateNodesAbsolute: a.minCandidateNodesAbsolute ?? 100,
  }),
  validate(a, path, errs) {
    const pct = a.minCandidateNodesPercentage as number;
    const abs = a.minCandidateNodesAbsolute as number;
    const pctPath = child(path, "minCandidateNodesPercentage");
    const absPath = child(path, "minCandidateNodesAbsolute");
    if (pct < 0 || pct > 100) errs.invalid(pctPath, pct, "not in valid range [0, 100]");
    if (abs < 0) errs.invalid(absPath, abs, "not in valid range [0, inf)");
    if (pct === 0 && abs === 0) {
      errs.invalid(pctPath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute");
      errs.invalid(absPath, abs, "cannot be zero at the same time as minCandidateNodesPercentage");
    }
  },
};

const interPodAffinity: PluginArgs = {
  plugin: "InterPodAffinity",
  kind: "InterPodAffinityArgs",
  fields: z.strictObject({
    hardPodAffinityWeight: int32.optional(),
    ignorePreferredTermsOfExistingPods: z.boolean().optional(),
  }),
  defaults: (a) => ({
    hardPodAffinityWeight: a.hardPodAffinityWeight ?? 1,
    ignorePreferredTermsOfExistingPods: a.ignorePreferredTermsOfExistingPods ?? false,
  }),
  validate(a, path, errs) {
    const w = a.hardPodAffinityWeight as number;
    if (w < 0 || w > 100) {
      errs.invalid(child(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]");
    }
  },
};

const selectorRequirement = z.strictObject({
  key: z.string(),
  operator: z.string(),
  values: z.array(z.string()).optional(),
});
const nodeSelectorTerm = z.strictObject({
  matchExpressions: z.array(selectorRequirement).optional(),
  matchFields: z.array(selectorRequirement).optional(),
});

/** The checks of kube's node selector requirements (component-helpers' nodeaffinity). */
function validateTerm(term: Obj, path: string, errs: FieldErrors): void {
  for (const list of ["matchExpressions", "matchFields"]) {
    ((term[list] ?? []) as Obj[]).forEach((r, i) => {
      const at = child(child(path, list), i);
      const values = (r.values ?? []) as string[];
      switch (r.operator) {
        case "In":
        case "NotIn":
          if (values.length === 0) {
            errs.required(
              child(at, "values"),
              "must be specified when `operator` is 'In' or 'NotIn'",
            );
          }
          break;
        case "Exists":
        case "DoesNotExist":
          if (values.length > 0) {
            errs.forbidden(
              child(at, "values"),
              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            );
          }
          break;
        case "Gt":
        case "Lt":
          if (values.length !== 1 || !/^-?\d+$/.test(values[0])) {
            errs.required(
              child(at, "values"),
              "must be specified single value when `operator` is 'Lt' or 'Gt'",
            );
          }
          break;
        default:
          errs.notSupported(child(at, "operator"), r.operator, [
            "DoesNotExist",
            "Exists",
            "Gt",
            "In",
            "Lt",
            "NotIn",
          ]);
      }
      if (list === "matchExpressions") validateLabelName(r.key as string, child(at, "key"), errs);
    });
  }
}

const nodeAffinity: PluginArgs = {
  plugin: "NodeAffinity",
  kind: "NodeAffinityArgs",
  fields: z.strictObject({
    addedAffinity: z.strictObject({
      requiredDuringSchedulingIgnoredDuringExecution: z.strictObject({
        nodeSelectorTerms: z.array(nodeSelectorTerm),
      }).optional(),
      preferredDuringSchedulingIgnoredDuringExecution: z.array(z.strictObject({
        weight: int32,
        preference: nodeSelectorTerm,
      })).optional(),
    }).optional(),
  }),
  defaults: (a) => (a.addedAffinity === undefined ? {} : { addedAffinity: a.addedAffinity }),
  validate(a, path, errs) {
    const added = a.addedAffinity as Obj | undefined;
    if (!added) return;
    const at = child(path, "addedAffinity");
    const required = added.requiredDuringSchedulingIgnoredDuringExecution as Obj | undefined;
    if (required) {
      const termsPath = child(
        child(at, "requiredDuringSchedulingIgnoredDuringExecution"),
        "nodeSelectorTerms",
      );
      (required.nodeSelectorTerms as Obj[]).forEach((t, i) =>
        validateTerm(t, child(termsPath, i), errs)
      );
    }
    const preferred = (added.preferredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[];
    preferred.forEach((p, i) => {
      const pAt = child(child(at, "preferredDuringSchedulingIgnoredDuringExecution"), i);
      validateTerm(p.preference as Obj, child(pAt, "preference"), errs);
    });
  },
};

const balancedAllocation: PluginArgs = {
  plugin: "NodeResourcesBalancedAllocation",
  kind: "NodeResourcesBalancedAllocationArgs",
  fields: z.strictObject({ resources: z.array(resourceSpec).optional() }),
  defaults: (a) => ({ resources: defaultResources(a.resources as Obj[] | undefined) }),
  validate(a, path, errs) {
    const seen = new Set<unknown>();
    (a.resources as Obj[]).forEach((r, i) => {
      const at = child(child(path, "resources"), i);
      if (seen.has(r.name)) errs.duplicate(child(at, "name"), r.name);
      seen.add(r.name);
      if (r.weight !== 1) errs.invalid(child(at, "weight"), r.weight, "must be 1");
    });
  },
};

const SCORING_TYPES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"];

const fit: PluginArgs = {
  plugin: "NodeResourcesFit",
  kind: "NodeResourcesFitArgs",
  fields: z.strictObject({
    ignoredResources: z.array(z.string()).optional(),
    ignoredResourceGroups: z.array(z.string()).optional(),
    scoringStrategy: z.strictObject({
      type: z.string().optional(),
      resources: z.array(resourceSpec).optional(),
      requestedToCapacityRatio: z.strictObject({ shape: z.array(shapePoint).optional() })
        .optional(),
    }).optional(),
  }),
  defaults(a) {
    const s = a.scoringStrategy as Obj | undefined;
    const ratio = s?.requestedToCapacityRatio as Obj | undefined;
    return {
      ...(a.ignoredResources ? { ignoredResources: a.ignoredResources } : {}),
      ...(a.ignoredResourceGroups ? { ignoredResourceGroups: a.ignoredResourceGroups } : {}),
      scoringStrategy: {
        type: s?.type || "LeastAllocated",
        resources: defaultResources(s?.resources as Obj[] | undefined),
        ...(ratio
          ? { requestedToCapacityRatio: { shape: shapeDefaults((ratio.shape ?? []) as Obj[]) } }
          : {}),
      },
    };
  },
  validate(a, path, errs) {
    ((a.ignoredResources ?? []) as string[]).forEach((r, i) =>
      validateLabelName(r, child(child(path, "ignoredResources"), i), errs)
    );
    ((a.ignoredResourceGroups ?? []) as string[]).forEach((g, i) => {
      const at = child(child(path, "ignoredResourceGroups"), i);
      if (g.includes("/")) errs.invalid(at, g, "resource group name can't contain '/'");
      validateLabelName(g, at, errs);
    });
    const s = a.scoringStrategy as Obj;
    const at = child(path, "scoringStrategy");
    if (!SCORING_TYPES.includes(s.type as string)) {
      errs.notSupported(child(at, "type"), s.type, SCORING_TYPES);
    }
    (s.resources as Obj[]).forEach((r, i) => {
      const w = r.weight as number;
      if (w <= 0 || w > 100) {
        errs.invalid(
          child(child(child(at, "resources"), i), "weight"),
          w,
          `resource weight of ${r.name} not in valid range (0, 100]`,
        );
      }
    });
    const ratio = s.requestedToCapacityRatio as Obj | undefined;
    const ratioPath = child(at, "requestedToCapacityRatio");
    if (s.type === "RequestedToCapacityRatio") {
      if (!ratio) {
        errs.required(ratioPath, "must be specified when type is RequestedToCapacityRatio");
      } else validateShape(ratio.shape as Obj[], child(ratioPath, "shape"), errs);
    } else if (ratio) {
      errs.forbidden(ratioPath, "must be nil when type is not RequestedToCapacityRatio");
    }
  },
};

const WHEN_UNSATISFIABLE = ["DoNotSchedule", "ScheduleAnyway"];

const podTopologySpread: PluginArgs = {
  plugin: "PodTopologySpread",
  kind: "PodTopologySpreadArgs",
  fields: z.strictObject({
    defaultConstraints: z.array(z.strictObject({
      maxSkew: int32.optional(),
      topologyKey: z.string().optional(),
      whenUnsatisfiable: z.string().optional(),
      labelSelector: z.record(z.string(), z.unknown()).nullish(),
      minDomains: int32.optional(),
      nodeAffinityPolicy: z.string().optional(),
      nodeTaintsPolicy: z.string().optional(),
      matchLabelKeys: z.array(z.string()).optional(),
    })).optional(),
    defaultingType: z.string().optional(),
  }),
  defaults: (a) => ({
    defaultConstraints: ((a.defaultConstraints ?? []) as Obj[]).map((c) => ({
      ...c,
      maxSkew: c.maxSkew ?? 0,
      topologyKey: c.topologyKey ?? "",
      whenUnsatisfiable: c.whenUnsatisfiable ?? "",
    })),
    defaultingType: a.defaultingType || "System",
  }),
  validate(a, path, errs) {
    const constraints = a.defaultConstraints as Obj[];
    const typePath = child(path, "defaultingType");
    if (a.defaultingType !== "System" && a.defaultingType !== "List") {
      errs.notSupported(typePath, a.defaultingType, ["System", "List"]);
    } else if (a.defaultingType === "System" && constraints.length > 0) {
      errs.invalid(typePath, a.defaultingType, "when .defaultConstraints are not empty");
    }
    constraints.forEach((c, i) => {
      const at = child(child(path, "defaultConstraints"), i);
      if ((c.maxSkew as number) <= 0) {
        errs.invalid(child(at, "maxSkew"), c.maxSkew, "not in valid range (0, inf)");
      }
      if (c.topologyKey === "") errs.required(child(at, "topologyKey"), "can not be empty");
      else validateLabelName(c.topologyKey as string, child(at, "topologyKey"), errs);
      if (c.whenUnsatisfiable === "") {
        errs.required(child(at, "whenUnsatisfiable"), "can not be empty");
      } else if (!WHEN_UNSATISFIABLE.includes(c.whenUnsatisfiable as string)) {
        errs.notSupported(child(at, "whenUnsatisfiable"), c.whenUnsatisfiable, WHEN_UNSATISFIABLE);
      }
      if (c.labelSelector !== undefined && c.labelSelector !== null) {
        errs.forbidden(
          child(at, "labelSelector"),
          "constraint must not define a selector, as they deduced for each pod",
        );
      }
      const repeat = constraints.slice(0, i).some((o) =>
        o.topologyKey === c.topologyKey && o.whenUnsatisfiable === c.whenUnsatisfiable
      );
      if (repeat) errs.duplicate(at, `{${c.topologyKey}, ${c.whenUnsatisfiable}}`);
    });
  },
};

const volumeBinding: PluginArgs = {
  plugin: "VolumeBinding",
  kind: "VolumeBindingArgs",
  fields: z.strictObject({
    bindTimeoutSeconds: int64.optional(),
    shape: z.array(shapePoint).optional(),
  }),
  defaults: (a) => ({
    bindTimeoutSeconds: a.bindTimeoutSeconds ?? 600,
    ...(a.shape ? { shape: shapeDefaults(a.shape as Obj[]) } : {}),
  }),
  validate(a, path, errs) {
    const t = a.bindTimeoutSeconds as number;
    if (t < 0) {
      errs.invalid(
        child(path, "bindTimeoutSeconds"),
        t,
        "invalid BindTimeoutSeconds, should not be a negative value",
      );
    }
    if (a.shape) validateShape(a.shape as Obj[], child(path, "shape"), errs);
  },
};

/** Every plugin whose arguments are typed, by plugin name. */
export const PLUGIN_ARGS: ReadonlyMap<string, PluginArgs> = new Map(
  [
    defaultPreemption,
    interPodAffinity,
    nodeAffinity,
    balancedAllocation,
    fit,
    podTopologySpread,
    volumeBinding,
  ].map((p) => [p.plugin, p]),
);

/**
 * The arguments of `plugin` checked and defaulted; `root` and `prefix` place shape errors in
 * the whole document (`profiles[0].pluginConfig[1].args.x`).
 */
export function checkPluginArgs(
  spec: PluginArgs,
  args: Obj,
  at: { root: unknown; prefix: readonly PropertyKey[]; path: string },
  errs: FieldErrors,
): Obj | undefined {
  const shape = parseShape(spec.fields, args, at);
  if (!shape.ok) {
    errs.lines(shape.errors);
    return undefined;
  }
  const defaulted = spec.defaults(shape.value as Obj);
  spec.validate(defaulted, at.path, errs);
  return defaulted;
}

/** Each plugin argument kind as a kind of its own. */
export const pluginArgsKinds: ConfigKind[] = [...PLUGIN_ARGS.values()].map((spec) => ({
  kind: spec.kind,
  apiVersions: SCHEDULER_API_VERSIONS,
  check(doc) {
    const { apiVersion, kind, ...args } = doc;
    const errs = new FieldErrors();
    const defaulted = checkPluginArgs(spec, args, { root: doc, prefix: [], path: "" }, errs);
    return {
      errors: errs.messages(),
      defaulted: defaulted && { apiVersion, kind, ...defaulted },
    };
  },
}));
