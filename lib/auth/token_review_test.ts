import { assertEquals } from "../../tests/assert.ts";
import { tokenAuthenticator, unionAuthenticator } from "./authenticator.ts";
import { SERVICE_ACCOUNT_ISSUER, ServiceAccountTokens } from "./service_account_tokens.ts";
import { tokenReviewer } from "./token_review.ts";

const API = SERVICE_ACCOUNT_ISSUER;
const VAULT = "https://vault.example.com";

Deno.test("tokenReviewer applies kube's audience rules", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    const tokens = await ServiceAccountTokens.open(dir);
    const lookup = (ns: string, name: string) =>
      Promise.resolve(ns === "default" && name === "robot" ? "uid-1" : undefined);
    const staticTokens = tokenAuthenticator(
      new Map([["static-token", { username: "alice", groups: [] }]]),
    );
    const review = tokenReviewer(
      unionAuthenticator([staticTokens, tokens.authenticator(lookup)]),
      { tokens, lookup },
    );
    const robot = { namespace: "default", name: "robot", uid: "uid-1" };
    const issue = async (audiences: string[]) =>
      (await tokens.issue(robot, { audiences, expirationSeconds: 3600 })).token;

    await t.step("no audiences asked: the API server's", async () => {
      const res = await review(await issue([API]));
      assertEquals([res.user?.username, res.audiences], ["system:serviceaccount:default:robot", [
        API,
      ]]);
      assertEquals((await review("static-token")).audiences, [API]);
    });
    await t.step(
      "a service account token is valid for its aud claim: the intersection",
      async () => {
        const token = await issue([VAULT, "other"]);
        const res = await review(token, [VAULT, "https://nowhere"]);
        assertEquals([res.user?.username, res.audiences, res.error], [
          "system:serviceaccount:default:robot",
          [VAULT],
          undefined,
        ]);
        const none = await review(token, [API]);
        assertEquals([none.user, none.audiences], [undefined, []]);
        assertEquals(
          none.error,
          `token audiences ["${VAULT}" "other"] is invalid for the target audiences ["${API}"]`,
        );
      },
    );
    await t.step("an API server token is not valid for another audience", async () => {
      const sa = await review(await issue([API]), [VAULT]);
      assertEquals([sa.user, sa.audiences], [undefined, []]);
      assertEquals(
        sa.error,
        `token audiences ["${API}"] is invalid for the target audiences ["${VAULT}"]`,
      );
      const fixed = await review("static-token", [VAULT]);
      assertEquals([fixed.user, fixed.audiences], [undefined, []]);
      assertEquals(
        fixed.error,
        `token audiences ["${API}"] is invalid for the target audiences ["${VAULT}"]`,
      );
      assertEquals((await review("static-token", [VAULT, API])).audiences, [API]);
    });
    await t.step("an unknown token is invalid whatever the audiences", async () => {
      assertEquals(await review("nope", [VAULT]), { audiences: [], error: "invalid bearer token" });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
