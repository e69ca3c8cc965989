/**
 * kubectl's typed auth commands, which POST protobuf (`application/vnd.kubernetes.protobuf`)
 * to Kubernetes' group names and decode only those: `auth can-i` (SelfSubjectAccessReview,
 * and SelfSubjectRulesReview for `--list`), `auth whoami` (SelfSubjectReview) and
 * `create token` (serviceaccounts/token), whose token then signs kubectl in.
 */

import assert from "node:assert/strict";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";

Deno.test({
  name: "kubectl: auth can-i, auth whoami, create token",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using env = await kubectlEnv();
  const { kubectl, ok } = env;

  await t.step(
    "auth can-i answers yes for the admin (cluster-admin through system:masters)",
    async () => {
      assert.equal(await ok(["auth", "can-i", "list", "configmaps"]), "yes\n");
      assert.equal(await ok(["auth", "can-i", "get", "/healthz"]), "yes\n");
      const list = await ok(["auth", "can-i", "--list"]);
      assert.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs\n\*\.\*\s+\[\]/);
    },
  );

  await t.step("auth whoami shows the admin", async () => {
    const out = await ok(["auth", "whoami"]);
    assert.match(out, /^ATTRIBUTE\s+VALUE\nUsername\s+platform-admin\n/);
    assert.match(out, /\nGroups\s+\[system:masters system:authenticated\]\n/);
  });

  await t.step("create token: the token signs kubectl in as the service account", async () => {
    await ok(["create", "serviceaccount", "robot"]);
    const token = (await ok(["create", "token", "robot", "--duration=20m"])).trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const out = await ok([
      "--token",
      token,
      "auth",
      "whoami",
      "-o",
      "jsonpath={.status.userInfo.username}",
    ]);
    assert.equal(out, "system:serviceaccount:default:robot");
    const missing = await kubectl(["create", "token", "nobody"]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /serviceaccounts "nobody" not found/);
  });
});
