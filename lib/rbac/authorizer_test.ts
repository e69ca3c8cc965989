import { assertEquals } from "../../tests/assert.ts";
import { MemoryStore } from "../storage/memory.ts";
import { Catalogue } from "../registry/catalogue.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import { ResourceRegistry } from "../registry/generic.ts";
import { SchemaSet } from "../schema/schema_set.ts";
import { silentLogger } from "../api/log.ts";
import type { Attributes } from "../auth/authorizer.ts";
import { rbacAuthorizer, type RbacSources } from "./authorizer.ts";
import { RBAC_GROUP } from "./policy_index.ts";

const ADMIN = { user: { username: "admin", groups: ["system:masters"] } };
const bob = { username: "bob", groups: ["system:authenticated"] };

async function setup() {
  const store = new MemoryStore();
  const catalogue = new Catalogue(builtinDefinitions());
  const registry = (plural: string) =>
    new ResourceRegistry(catalogue.lookup(RBAC_GROUP, "v1", plural)!, {
      store,
      schemas: SchemaSet.builtin(),
    });
  const sources: RbacSources = {
    roles: registry("roles"),
    roleBindings: registry("rolebindings"),
    clusterRoles: registry("clusterroles"),
    clusterRoleBindings: registry("clusterrolebindings"),
  };
  await sources.clusterRoles.create("", {
    metadata: { name: "reader" },
    rules: [{ verbs: ["get"], apiGroups: ["coordination.platform.io"], resources: ["leases"] }],
  }, ADMIN);
  const rbac = rbacAuthorizer(sources, { logger: silentLogger });
  await rbac.start();
  return {
    sources,
    rbac,
    async [Symbol.asyncDispose]() {
      await rbac.stop();
      await store.close();
    },
  };
}

/** Lets the informers apply what was just written (the next HTTP request would come later). */
const settle = () => new Promise((r) => setTimeout(r, 0));

/** A RoleBinding in ns1 of the ClusterRole `reader` to bob, once the informers have it. */
async function bindBobToReader(sources: RbacSources): Promise<void> {
  await sources.roleBindings.create("ns1", {
    metadata: { name: "bob-reads" },
    roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: "reader" },
    subjects: [{ apiGroup: RBAC_GROUP, kind: "User", name: "bob" }],
  }, ADMIN);
  await settle();
}

const getLease = (group = "coordination.platform.io"): Attributes => ({
  user: bob,
  verb: "get",
  resourceRequest: true,
  namespace: "ns1",
  apiGroup: group,
  resource: "leases",
  name: "l",
});

Deno.test("rbacAuthorizer: bindings are honoured once written, and no longer once deleted", async () => {
  await using t = await setup();
  assertEquals(await t.rbac.authorize(getLease()), { decision: "NoOpinion" });
  await bindBobToReader(t.sources);
  assertEquals(await t.rbac.authorize(getLease()), {
    decision: "Allow",
    reason: 'RBAC: allowed by RoleBinding "bob-reads/ns1" of ClusterRole "reader" to User "bob"',
  });
  // Kubernetes' spelling of the group (kube's typed clients) is the same group.
  assertEquals((await t.rbac.authorize(getLease("coordination.k8s.io"))).decision, "Allow");
  assertEquals((await t.rbac.authorize({ ...getLease(), verb: "delete" })).decision, "NoOpinion");
  assertEquals((await t.rbac.authorize({ ...getLease(), namespace: "ns2" })).decision, "NoOpinion");
  await t.sources.roleBindings.delete("ns1", "bob-reads");
  await settle();
  assertEquals((await t.rbac.authorize(getLease())).decision, "NoOpinion");
});

Deno.test("rbacAuthorizer: remembered decisions never answer a different request", async () => {
  await using t = await setup();
  await bindBobToReader(t.sources);
  assertEquals((await t.rbac.authorize(getLease())).decision, "Allow");
  // The same characters in other fields: "leases" + "" against "lease" + "s".
  const shifted = { ...getLease(), resource: "lease", subresource: "s" };
  assertEquals((await t.rbac.authorize(shifted)).decision, "NoOpinion");
  // Another user object with another name, asking the same.
  const eve = { username: "eve", groups: ["system:authenticated"] };
  assertEquals((await t.rbac.authorize({ ...getLease(), user: eve })).decision, "NoOpinion");
  assertEquals((await t.rbac.authorize(getLease())).decision, "Allow");
});

Deno.test("rbacAuthorizer: a missing role is the reason, as kube words it", async () => {
  await using t = await setup();
  await t.sources.clusterRoleBindings.create("", {
    metadata: { name: "dangling" },
    roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: "gone" },
    subjects: [{ apiGroup: RBAC_GROUP, kind: "Group", name: "system:authenticated" }],
  }, ADMIN);
  await settle();
  assertEquals(await t.rbac.authorize(getLease()), {
    decision: "NoOpinion",
    reason: `RBAC: clusterrole.${RBAC_GROUP} "gone" not found`,
  });
  assertEquals(await t.rbac.rulesFor(bob, "ns1"), {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: false,
    evaluationError: `clusterrole.${RBAC_GROUP} "gone" not found`,
  });
});

Deno.test("rbacAuthorizer: rulesFor splits resource and non-resource rules", async () => {
  await using t = await setup();
  await t.sources.clusterRoles.create("", {
    metadata: { name: "mixed" },
    rules: [
      { verbs: ["get"], nonResourceURLs: ["/healthz"] },
      { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["s"] },
    ],
  }, ADMIN);
  await t.sources.clusterRoleBindings.create("", {
    metadata: { name: "mixed" },
    roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: "mixed" },
    subjects: [{ apiGroup: RBAC_GROUP, kind: "User", name: "bob" }],
  }, ADMIN);
  await settle();
  assertEquals(await t.rbac.rulesFor(bob, "ns1"), {
    resourceRules: [{
      verbs: ["get"],
      apiGroups: [""],
      resources: ["secrets"],
      resourceNames: ["s"],
    }],
    nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
    incomplete: false,
  });
});
