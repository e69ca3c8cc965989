import assert from "node:assert/strict";
import {
  buildAuthorizer,
  privilegedGroupsAuthorizer,
  unionAuthorizer,
} from "./authorizer_chain.ts";
import {
  alwaysAllow,
  alwaysDeny,
  type Attributes,
  type AuthorizationResult,
  type Authorizer,
  type RuleSet,
} from "./authorizer.ts";

const alice: Attributes = {
  user: { username: "alice", groups: ["dev"] },
  verb: "get",
  resourceRequest: true,
  namespace: "default",
  apiGroup: "",
  apiVersion: "v1",
  resource: "pods",
};

/** An authorizer answering `result` and `rules`, counting its calls. */
function fixed(result: AuthorizationResult, rules?: Partial<RuleSet>) {
  const calls = { authorize: 0 };
  const authorizer: Authorizer = {
    authorize: () => {
      calls.authorize++;
      return Promise.resolve(result);
    },
    rulesFor: () =>
      Promise.resolve({ resourceRules: [], nonResourceRules: [], incomplete: false, ...rules }),
  };
  return { authorizer, calls };
}

Deno.test("union: the first Allow or Deny decides and later authorizers are not asked", async () => {
  const later = fixed({ decision: "Allow" });
  const deny = unionAuthorizer([
    fixed({ decision: "NoOpinion", reason: "not mine" }).authorizer,
    fixed({ decision: "Deny", reason: "blocked" }).authorizer,
    later.authorizer,
  ]);
  assert.deepStrictEqual(await deny.authorize(alice), { decision: "Deny", reason: "blocked" });
  assert.deepStrictEqual(later.calls.authorize, 0);

  const allow = unionAuthorizer([alwaysDeny, alwaysAllow]);
  assert.deepStrictEqual(await allow.authorize(alice), { decision: "Allow" });
});

Deno.test("union: all no opinion joins reasons with newlines and aggregates errors", async () => {
  const union = unionAuthorizer([
    fixed({ decision: "NoOpinion", reason: "rbac: no binding" }).authorizer,
    fixed({ decision: "NoOpinion" }).authorizer,
    fixed({ decision: "NoOpinion", reason: "webhook failed", evaluationError: "e1" }).authorizer,
    { authorize: () => Promise.reject(new Error("boom")), rulesFor: alwaysDeny.rulesFor },
  ]);
  assert.deepStrictEqual(await union.authorize(alice), {
    decision: "NoOpinion",
    reason: "rbac: no binding\nwebhook failed",
    evaluationError: "[e1, boom]",
  });
  assert.deepStrictEqual(await unionAuthorizer([]).authorize(alice), { decision: "NoOpinion" });
});

Deno.test("union: synchronous authorizers answer without a promise; mixed chains keep order", async () => {
  const sync = (result: AuthorizationResult): Authorizer => ({
    authorize: () => result,
    rulesFor: alwaysDeny.rulesFor,
  });
  const masters = privilegedGroupsAuthorizer(["system:masters"]);
  const direct = unionAuthorizer([masters, sync({ decision: "Allow" })]).authorize(alice);
  assert.ok(!(direct instanceof Promise), "an all-synchronous chain answered with a promise");
  assert.deepStrictEqual(direct, { decision: "Allow" });

  const mixed = unionAuthorizer([
    sync({ decision: "NoOpinion", reason: "first" }),
    fixed({ decision: "NoOpinion", reason: "second" }).authorizer,
    {
      authorize: () => {
        throw new Error("sync boom");
      },
      rulesFor: alwaysDeny.rulesFor,
    },
    sync({ decision: "Deny", reason: "fourth" }),
  ]);
  assert.deepStrictEqual(await mixed.authorize(alice), { decision: "Deny", reason: "fourth" });
  const none = unionAuthorizer([
    fixed({ decision: "NoOpinion", reason: "a" }).authorizer,
    {
      authorize: () => {
        throw new Error("sync boom");
      },
      rulesFor: alwaysDeny.rulesFor,
    },
    sync({ decision: "NoOpinion", reason: "b" }),
  ]);
  assert.deepStrictEqual(await none.authorize(alice), {
    decision: "NoOpinion",
    reason: "a\nb",
    evaluationError: "sync boom",
  });
});

Deno.test("union: rulesFor concatenates rules and ORs incomplete", async () => {
  const union = unionAuthorizer([
    fixed({ decision: "NoOpinion" }, {
      resourceRules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }],
    }).authorizer,
    fixed({ decision: "NoOpinion" }, {
      nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
      incomplete: true,
      evaluationError: "webhook authorizer does not support user rule resolution",
    }).authorizer,
  ]);
  assert.deepStrictEqual(await union.rulesFor(alice.user, "default"), {
    resourceRules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }],
    nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
    incomplete: true,
    evaluationError: "webhook authorizer does not support user rule resolution",
  });
  assert.deepStrictEqual(await unionAuthorizer([alwaysDeny]).rulesFor(alice.user, "default"), {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: false,
  });
});

Deno.test("alwaysDeny has no opinion, with kube's reason", async () => {
  assert.deepStrictEqual(await alwaysDeny.authorize(alice), {
    decision: "NoOpinion",
    reason: "Everything is forbidden.",
  });
});

Deno.test("privilegedGroupsAuthorizer allows members only", async () => {
  const masters = privilegedGroupsAuthorizer(["system:masters"]);
  assert.deepStrictEqual((await masters.authorize(alice)).decision, "NoOpinion");
  const admin = { ...alice, user: { username: "root", groups: ["x", "system:masters"] } };
  assert.deepStrictEqual((await masters.authorize(admin)).decision, "Allow");
});

Deno.test("buildAuthorizer: system:masters first, then the configured order", async () => {
  const rbac = fixed({ decision: "NoOpinion", reason: "RBAC: no binding" });
  let made = 0;
  const chain = buildAuthorizer(
    {
      authorizers: [
        { type: "AlwaysDeny", name: "deny" },
        { type: "RBAC", name: "rbac" },
        { type: "AlwaysAllow", name: "allow" },
      ],
    },
    {
      rbac: () => {
        made++;
        return rbac.authorizer;
      },
    },
  );
  assert.deepStrictEqual(made, 1);
  assert.deepStrictEqual(await chain.authorize(alice), { decision: "Allow" });
  assert.deepStrictEqual(rbac.calls.authorize, 1);

  const denyOnly = buildAuthorizer({ authorizers: [{ type: "AlwaysDeny", name: "deny" }] }, {
    rbac: () => rbac.authorizer,
  });
  assert.deepStrictEqual(await denyOnly.authorize(alice), {
    decision: "NoOpinion",
    reason: "Everything is forbidden.",
  });
  const admin = { ...alice, user: { username: "platform-admin", groups: ["system:masters"] } };
  assert.deepStrictEqual(await denyOnly.authorize(admin), { decision: "Allow" });
  chain.close();
  denyOnly.close();
});
