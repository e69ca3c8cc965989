/**
 * Issue 17: TokenReview honours `spec.audiences`. A token is valid only for the audiences it
 * was issued for (a service account token: its `aud` claim; any other credential: the API
 * server's audiences), and `status.audiences` answers the ones asked for that it is valid for.
 */

import { assertEquals, assertMatch } from "../assert.ts";
import { testServer } from "../harness.ts";
import { SERVICE_ACCOUNT_ISSUER as API } from "../../lib/auth/service_account_tokens.ts";

const REVIEWS = "/apis/authentication.platform.io/v1/tokenreviews";
const VAULT = "https://vault.example.com";

Deno.test("token review: a token is valid only for its own audiences", async () => {
  await using ts = await testServer();
  const review = async (token: string, audiences?: string[]) => {
    const res = await ts.json("POST", REVIEWS, {
      body: { kind: "TokenReview", spec: { token, audiences } },
    });
    assertEquals(res.status, 201);
    return res.body.status;
  };
  const sa = "/api/v1/namespaces/default/serviceaccounts";
  assertEquals((await ts.json("POST", sa, { body: { metadata: { name: "robot" } } })).status, 201);
  const issue = async (audiences?: string[]) =>
    (await ts.json("POST", `${sa}/robot/token`, {
      body: { kind: "TokenRequest", spec: { audiences } },
    })).body.status.token as string;

  // The admin's static token: the API server's audiences only.
  const admin = ts.server.adminToken;
  const forVault = await review(admin, [VAULT]);
  assertEquals([forVault.authenticated, forVault.user], [false, {}]);
  assertMatch(
    forVault.error,
    /is invalid for the target audiences \["https:\/\/vault\.example\.com"\]/,
  );
  assertEquals((await review(admin)).audiences, [API]);
  assertEquals((await review(admin, [VAULT, API])).audiences, [API]);

  // A token for the API server is not one for vault.
  const apiToken = await issue();
  assertEquals((await review(apiToken)).audiences, [API]);
  const apiForVault = await review(apiToken, [VAULT]);
  assertEquals(apiForVault.authenticated, false);
  assertEquals(
    apiForVault.error,
    `token audiences ["${API}"] is invalid for the target audiences ["${VAULT}"]`,
  );

  // A token for vault reviews as valid for vault (the intersection), and for nothing else.
  const vaultToken = await issue([VAULT, "https://other.example.com"]);
  const ok = await review(vaultToken, ["https://third.example.com", VAULT]);
  assertEquals([ok.authenticated, ok.user.username, ok.audiences], [
    true,
    "system:serviceaccount:default:robot",
    [VAULT],
  ]);
  assertEquals((await review(vaultToken)).authenticated, false, "not for the API server");
  assertEquals((await ts.json("GET", "/api/v1/namespaces", { token: vaultToken })).status, 401);
});
