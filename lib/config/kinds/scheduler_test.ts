// deno-lint-ignore-file no-explicit-any
import assert from "node:assert/strict";
import { checkKindDocument } from "./registry.ts";

const VERSIONS = ["scheduler.config.platform.io/v1", "kubescheduler.config.k8s.io/v1"];
const KIND = "KubeSchedulerConfiguration";
const sched = (fields: Record<string, unknown> = {}, apiVersion = VERSIONS[1]) => ({
  apiVersion,
  kind: KIND,
  ...fields,
});
const errorsOf = (doc: Record<string, unknown>) => checkKindDocument(doc).errors;
/** The errors of one plugin's arguments given in a profile's pluginConfig. */
const argsErrors = (name: string, args: Record<string, unknown>) =>
  errorsOf(sched({ profiles: [{ pluginConfig: [{ name, args }] }] }));

Deno.test("KubeSchedulerConfiguration: kube's v1 defaults under both apiVersions", () => {
  for (const apiVersion of VERSIONS) {
    const { errors, defaulted } = checkKindDocument(sched({}, apiVersion));
    assert.deepEqual(errors, []);
    const d = defaulted as any;
    assert.equal(d.parallelism, 16);
    assert.equal(d.podInitialBackoffSeconds, 1);
    assert.equal(d.podMaxBackoffSeconds, 10);
    assert.equal(d.percentageOfNodesToScore, 0);
    assert.equal(d.delayCacheUntilActive, false);
    assert.deepEqual(d.leaderElection, {
      leaderElect: true,
      leaseDuration: "15s",
      renewDeadline: "10s",
      retryPeriod: "2s",
      resourceLock: "leases",
      resourceName: "kube-scheduler",
      resourceNamespace: "kube-system",
    });
    assert.equal(d.clientConnection.qps, 50);
    assert.equal(d.clientConnection.burst, 100);
    assert.equal(d.enableProfiling, true);
    assert.equal(d.enableContentionProfiling, true);
    // One profile, default-scheduler, the default plugins and their default arguments.
    assert.equal(d.profiles.length, 1);
    const [profile] = d.profiles;
    assert.equal(profile.schedulerName, "default-scheduler");
    const enabled = profile.plugins.multiPoint.enabled;
    assert.deepEqual(enabled[0], { name: "SchedulingGates" });
    assert.deepEqual(enabled.find((p: any) => p.name === "TaintToleration"), {
      name: "TaintToleration",
      weight: 3,
    });
    const args = Object.fromEntries(profile.pluginConfig.map((c: any) => [c.name, c.args]));
    assert.deepEqual(args.DefaultPreemption, {
      apiVersion,
      kind: "DefaultPreemptionArgs",
      minCandidateNodesPercentage: 10,
      minCandidateNodesAbsolute: 100,
    });
    assert.equal(args.VolumeBinding.bindTimeoutSeconds, 600);
    assert.equal(args.InterPodAffinity.hardPodAffinityWeight, 1);
    assert.equal(args.PodTopologySpread.defaultingType, "System");
    assert.deepEqual(args.NodeResourcesFit.scoringStrategy, {
      type: "LeastAllocated",
      resources: [{ name: "cpu", weight: 1 }, { name: "memory", weight: 1 }],
    });
    assert.deepEqual(args.NodeResourcesBalancedAllocation.resources, [
      { name: "cpu", weight: 1 },
      { name: "memory", weight: 1 },
    ]);
  }
});

Deno.test("KubeSchedulerConfiguration: plugin sets merge with the defaults; given args are defaulted", () => {
  const { errors, defaulted } = checkKindDocument(sched({
    profiles: [{
      schedulerName: "mine",
      plugins: {
        multiPoint: {
          enabled: [{ name: "MyPlugin" }, { name: "ImageLocality", weight: 5 }],
          disabled: [{ name: "TaintToleration" }],
        },
        score: { disabled: [{ name: "*" }] },
      },
      pluginConfig: [{ name: "DefaultPreemption", args: { minCandidateNodesAbsolute: 5 } }],
    }],
  }));
  assert.deepEqual(errors, []);
  const [profile] = (defaulted as any).profiles;
  const names = profile.plugins.multiPoint.enabled.map((p: any) => p.name);
  assert.equal(names.includes("TaintToleration"), false);
  assert.equal(names.at(-1), "MyPlugin");
  assert.deepEqual(
    profile.plugins.multiPoint.enabled.find((p: any) => p.name === "ImageLocality"),
    {
      name: "ImageLocality",
      weight: 5,
    },
  );
  assert.deepEqual(profile.plugins.score, { disabled: [{ name: "*" }] });
  assert.deepEqual(profile.pluginConfig[0].args, {
    apiVersion: VERSIONS[1],
    kind: "DefaultPreemptionArgs",
    minCandidateNodesPercentage: 10,
    minCandidateNodesAbsolute: 5,
  });
  // Disabling every default under multiPoint leaves only the profile's own.
  const none = checkKindDocument(sched({
    profiles: [{ plugins: { multiPoint: { disabled: [{ name: "*" }] } } }],
  })).defaulted as any;
  assert.deepEqual(none.profiles[0].plugins.multiPoint.enabled, []);
  assert.deepEqual(none.profiles[0].pluginConfig, []);
});

Deno.test("KubeSchedulerConfiguration: the top-level rules", () => {
  assert.deepEqual(
    errorsOf(sched({
      parallelism: 0,
      percentageOfNodesToScore: 101,
      podInitialBackoffSeconds: 0,
      podMaxBackoffSeconds: -1,
      leaderElection: { leaseDuration: "5s" },
      clientConnection: { burst: -1 },
    })),
    [
      "clientConnection.burst: Invalid value: -1: must be non-negative",
      'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
      "parallelism: Invalid value: 0: should be an integer value greater than zero",
      "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
      "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
      "podMaxBackoffSeconds: Invalid value: -1: must be greater than or equal to PodInitialBackoffSeconds",
    ],
  );
  assert.deepEqual(errorsOf(sched({ podInitialBackoffSeconds: 5, podMaxBackoffSeconds: 4 })), [
    "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds",
  ]);
  assert.deepEqual(
    errorsOf(sched({ leaderElection: { leaseDuration: "-1s", renewDeadline: "-5s" } })),
    [
      'leaderElection.leaseDuration: Invalid value: "-1s": must be greater than zero',
      'leaderElection.renewDeadline: Invalid value: "-5s": must be greater than zero',
    ],
  );
  assert.deepEqual(errorsOf(sched({ leaderElection: { resourceLock: "endpointsleases" } })), [
    'leaderElection.resourceLock: Invalid value: "endpointsleases": resourceLock value must be "leases"',
  ]);
  assert.deepEqual(errorsOf(sched({ parallelism: "many" })), [
    'parallelism: Invalid value: "many": must be a number',
  ]);
});

Deno.test("KubeSchedulerConfiguration: profile rules (names, percentages, removed plugins, queue sort, duplicates)", () => {
  assert.deepEqual(
    errorsOf(sched({
      profiles: [
        {
          schedulerName: "a",
          percentageOfNodesToScore: -1,
          plugins: { queueSort: { enabled: [{ name: "PrioritySort" }, { name: "Other" }] } },
          pluginConfig: [{ name: "X" }, { name: "X" }, { name: "EBSLimits" }],
        },
        { schedulerName: "a", plugins: { filter: { enabled: [{ name: "GCEPDLimits" }] } } },
      ],
    })),
    [
      "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
      'profiles[0].pluginConfig[1]: Duplicate value: "X"',
      'profiles[0].pluginConfig[2]: Invalid value: "EBSLimits": was invalid in version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
      'profiles[1].plugins.filter.enabled[0]: Invalid value: "GCEPDLimits": was invalid in version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
      'profiles[1].schedulerName: Duplicate value: "profiles[0].schedulerName"',
      "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled",
      "profiles[1].plugins.queueSort: Invalid value: {}: must be the same for all profiles",
    ],
  );
  // The same queue sort with different arguments.
  const sort = { queueSort: { enabled: [{ name: "S" }] } };
  assert.deepEqual(
    errorsOf(sched({
      profiles: [
        { schedulerName: "a", plugins: sort, pluginConfig: [{ name: "S", args: { x: 1 } }] },
        { schedulerName: "b", plugins: sort, pluginConfig: [{ name: "S", args: { x: 2 } }] },
      ],
    })),
    ['profiles[1].pluginConfig.args: Invalid value: {"x":2}: queueSort must be the same for all profiles'],
  );
  assert.deepEqual(
    argsErrors("VolumeBinding", { apiVersion: VERSIONS[0], kind: "DefaultPreemptionArgs" }),
    [
      'profiles[0].pluginConfig[0].args: Invalid value: {"apiVersion":"scheduler.config.platform.io/v1","kind":"DefaultPreemptionArgs"}: has to match plugin args',
    ],
  );
});

Deno.test("KubeSchedulerConfiguration: extenders", () => {
  assert.deepEqual(
    errorsOf(sched({
      extenders: [
        {
          urlPrefix: "http://a",
          prioritizeVerb: "prioritize",
          bindVerb: "bind",
          httpTimeout: "30s",
        },
        {
          urlPrefix: "http://b",
          bindVerb: "bind",
          weight: 1,
          managedResources: [
            { name: "example.com/gpu", ignoredByScheduler: true },
            { name: "cpu" },
            { name: "example.com/gpu" },
          ],
        },
      ],
    })),
    [
      "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
      'extenders[1].managedResources[1].name: Invalid value: "cpu": is an invalid extended resource name',
      'extenders[1].managedResources[2].name: Invalid value: "example.com/gpu": duplicate extender managed resource name',
      'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
    ],
  );
  const ok = checkKindDocument(sched({
    extenders: [{ urlPrefix: "http://a", prioritizeVerb: "p", weight: 2, httpTimeout: "1m" }],
  }));
  assert.deepEqual(ok.errors, []);
  assert.equal((ok.defaulted as any).extenders[0].httpTimeout, "1m0s");
});

Deno.test("plugin args: DefaultPreemptionArgs and InterPodAffinityArgs", () => {
  const at = "profiles[0].pluginConfig[0].args";
  assert.deepEqual(
    argsErrors("DefaultPreemption", {
      minCandidateNodesPercentage: 101,
      minCandidateNodesAbsolute: -1,
    }),
    [
      `${at}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]`,
      `${at}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)`,
    ],
  );
  assert.deepEqual(
    argsErrors("DefaultPreemption", {
      minCandidateNodesPercentage: 0,
      minCandidateNodesAbsolute: 0,
    }),
    [
      `${at}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute`,
      `${at}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage`,
    ],
  );
  assert.deepEqual(argsErrors("InterPodAffinity", { hardPodAffinityWeight: 101 }), [
    `${at}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]`,
  ]);
  assert.deepEqual(argsErrors("InterPodAffinity", { weight: 1 }), [`${at}.weight: unknown field`]);
});

Deno.test("plugin args: each kind alone, under both apiVersions, with its defaults", () => {
  for (const apiVersion of VERSIONS) {
    const one = (kind: string, fields: Record<string, unknown> = {}) =>
      checkKindDocument({ apiVersion, kind, ...fields });
    assert.deepEqual(one("VolumeBindingArgs").defaulted, {
      apiVersion,
      kind: "VolumeBindingArgs",
      bindTimeoutSeconds: 600,
    });
    assert.deepEqual(one("NodeAffinityArgs").defaulted, { apiVersion, kind: "NodeAffinityArgs" });
    assert.deepEqual(one("PodTopologySpreadArgs").defaulted, {
      apiVersion,
      kind: "PodTopologySpreadArgs",
      defaultConstraints: [],
      defaultingType: "System",
    });
    assert.deepEqual(one("VolumeBindingArgs", { bindTimeoutSeconds: -1 }).errors, [
      "bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value",
    ]);
  }
});

Deno.test("plugin args: NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs", () => {
  const at = "profiles[0].pluginConfig[0].args";
  assert.deepEqual(
    argsErrors("NodeResourcesFit", {
      ignoredResources: ["bad name!"],
      ignoredResourceGroups: ["example.com/gpu"],
      scoringStrategy: { type: "Random", resources: [{ name: "cpu", weight: 101 }] },
    }),
    [
      `${at}.ignoredResources[0]: Invalid value: "bad name!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      `${at}.ignoredResourceGroups[0]: Invalid value: "example.com/gpu": resource group name can't contain '/'`,
      `${at}.scoringStrategy.type: Unsupported value: "Random": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"`,
      `${at}.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]`,
    ],
  );
  assert.deepEqual(
    argsErrors("NodeResourcesFit", { scoringStrategy: { type: "RequestedToCapacityRatio" } }),
    [
      `${at}.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio`,
    ],
  );
  assert.deepEqual(
    argsErrors("NodeResourcesFit", {
      scoringStrategy: {
        type: "MostAllocated",
        requestedToCapacityRatio: { shape: [{ utilization: 0, score: 0 }] },
      },
    }),
    [`${at}.scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio`],
  );
  assert.deepEqual(
    argsErrors("NodeResourcesFit", {
      scoringStrategy: {
        type: "RequestedToCapacityRatio",
        requestedToCapacityRatio: {
          shape: [{ utilization: 50, score: 11 }, { utilization: 40, score: 1 }, {
            utilization: 101,
            score: 1,
          }],
        },
      },
    }),
    [
      `${at}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 40: values must be sorted in increasing order`,
      `${at}.scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]`,
      `${at}.scoringStrategy.requestedToCapacityRatio.shape[2].utilization: Invalid value: 101: not in valid range [0, 100]`,
    ],
  );
  assert.deepEqual(
    argsErrors("NodeResourcesBalancedAllocation", {
      resources: [{ name: "cpu", weight: 2 }, { name: "cpu" }],
    }),
    [
      `${at}.resources[0].weight: Invalid value: 2: must be 1`,
      `${at}.resources[1].name: Duplicate value: "cpu"`,
    ],
  );
});

Deno.test("plugin args: PodTopologySpreadArgs, VolumeBindingArgs shape and NodeAffinityArgs", () => {
  const at = "profiles[0].pluginConfig[0].args";
  assert.deepEqual(
    argsErrors("PodTopologySpread", {
      defaultConstraints: [{
        maxSkew: 1,
        topologyKey: "zone",
        whenUnsatisfiable: "ScheduleAnyway",
      }],
    }),
    [`${at}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty`],
  );
  assert.deepEqual(
    argsErrors("PodTopologySpread", {
      defaultingType: "List",
      defaultConstraints: [
        { maxSkew: 0, topologyKey: "", whenUnsatisfiable: "Maybe", labelSelector: {} },
        { maxSkew: 1, topologyKey: "zone", whenUnsatisfiable: "" },
        { maxSkew: 1, topologyKey: "zone", whenUnsatisfiable: "DoNotSchedule" },
        { maxSkew: 2, topologyKey: "zone", whenUnsatisfiable: "DoNotSchedule" },
      ],
    }),
    [
      `${at}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)`,
      `${at}.defaultConstraints[0].topologyKey: Required value: can not be empty`,
      `${at}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"`,
      `${at}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod`,
      `${at}.defaultConstraints[1].whenUnsatisfiable: Required value: can not be empty`,
      `${at}.defaultConstraints[3]: Duplicate value: "{zone, DoNotSchedule}"`,
    ],
  );
  assert.deepEqual(argsErrors("PodTopologySpread", { defaultingType: "Auto" }), [
    `${at}.defaultingType: Unsupported value: "Auto": supported values: "System", "List"`,
  ]);
  assert.deepEqual(argsErrors("VolumeBinding", { shape: [] }), [
    `${at}.shape: Required value: at least one point must be specified`,
  ]);
  const term = (matchExpressions: unknown[]) => ({ matchExpressions });
  assert.deepEqual(
    argsErrors("NodeAffinity", {
      addedAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [term([
            { key: "zone", operator: "In" },
            { key: "zone", operator: "Exists", values: ["a"] },
            { key: "n", operator: "Gt", values: ["x"] },
            { key: "zone", operator: "Near" },
          ])],
        },
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 1, preference: term([{ key: "-bad-", operator: "Exists" }]) },
        ],
      },
    }),
    [
      `${at}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`,
      `${at}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`,
      `${at}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[2].values: Required value: must be specified single value when \`operator\` is 'Lt' or 'Gt'`,
      `${at}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[3].operator: Unsupported value: "Near": supported values: "DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"`,
      `${at}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: Invalid value: "-bad-": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    ],
  );
});
