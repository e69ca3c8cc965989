/** The JWT authenticator against a real OIDC issuer (see oidc_issuer_testdata.ts). */

import assert from "node:assert/strict";
import { type JWTPayload, SignJWT } from "jose";
import { ensurePki } from "../certificates/pki.ts";
import { createLogger } from "../api/log.ts";
import type { UserInfo } from "../api/user.ts";
import { parseAuthenticationConfig } from "./authentication_config.ts";
import { JwtAuthenticator, type JwtAuthenticatorOptions } from "./jwt.ts";
import {
  Issuer,
  type Json,
  now,
  sign,
  type SigningKey,
  signingKey,
} from "./oidc_issuer_testdata.ts";

function request(token: string): Request {
  return new Request("https://platform.example/api", {
    headers: { Authorization: `Bearer ${token}` },
  });
}

/** Every log line, for checking that no token leaks into them. */
const logLines: string[] = [];
const logger = createLogger("debug", (line) => logLines.push(line));

Deno.test("JWT authenticator against an OIDC issuer", async (t) => {
  const dataDir = await Deno.makeTempDir();
  const pki = await ensurePki({ dataDir, sans: [], bindAddress: "127.0.0.1", logger });
  await using issuer = new Issuer(pki);
  const rsa = await signingKey("RS256", "rsa-1");
  const ec = await signingKey("ES256", "ec-1");
  issuer.keys = [rsa, ec];
  const authenticators: JwtAuthenticator[] = [];

  /** An authenticator for `issuer`, from a config entry with `patch` merged in. */
  function authenticator(patch: Json = {}, opts: Partial<JwtAuthenticatorOptions> = {}) {
    const { issuer: issuerPatch, ...rest } = patch;
    const entry: Json = {
      issuer: {
        url: issuer.url,
        audiences: ["platform"],
        certificateAuthority: pki.caCertPem,
        ...(issuerPatch as Json | undefined),
      },
      claimMappings: { username: { claim: "sub", prefix: "" } },
      ...rest,
    };
    const cfg = parseAuthenticationConfig(
      JSON.stringify({
        apiVersion: "apiserver.platform.io/v1beta1",
        kind: "AuthenticationConfiguration",
        jwt: [entry],
      }),
      "auth.yaml",
    );
    const a = new JwtAuthenticator(cfg.jwt[0], {
      logger,
      retryIntervalMs: 50,
      jwksCooldownMs: 0,
      ...opts,
    });
    authenticators.push(a);
    return a;
  }

  /** Claims of a valid token for `issuer`. */
  const claims = (extra: JWTPayload = {}): JWTPayload => ({
    iss: issuer.url,
    aud: ["platform"],
    sub: "alice",
    iat: now(),
    exp: now() + 300,
    ...extra,
  });

  const authenticate = async (a: JwtAuthenticator, token: string) =>
    await a.authenticate(request(token));
  const tokens: string[] = [];
  const token = async (key: SigningKey, c: JWTPayload, header: Json = {}) => {
    const tok = await sign(key, c, header);
    tokens.push(tok);
    return tok;
  };

  try {
    await t.step("claims map to the user with prefixes (RS256)", async () => {
      const a = authenticator({
        claimMappings: {
          username: { claim: "sub", prefix: "oidc:" },
          groups: { claim: "groups", prefix: "oidc:" },
          uid: { claim: "oid" },
        },
      });
      const user = await authenticate(
        a,
        await token(rsa, claims({ groups: ["dev", "", "ops"], oid: "u-1" })),
      );
      assert.deepEqual(
        user,
        {
          username: "oidc:alice",
          uid: "u-1",
          groups: ["oidc:dev", "oidc:ops", "system:authenticated"],
        } satisfies UserInfo,
      );
      // A single string claim is one group; no claim is no group.
      assert.deepEqual(
        (await authenticate(a, await token(rsa, claims({ groups: "admins", oid: "u-1" }))))
          ?.groups,
        ["oidc:admins", "system:authenticated"],
      );
      assert.deepEqual(
        (await authenticate(a, await token(rsa, claims({ oid: "u-1" }))))?.groups,
        ["system:authenticated"],
      );
      // uid must be a string claim when mapped.
      assert.equal(await authenticate(a, await token(rsa, claims({ oid: 7 }))), undefined);
      assert.equal(await authenticate(a, await token(rsa, claims())), undefined);
    });

    await t.step("CEL expressions map claims (ES256)", async () => {
      const a = authenticator({
        claimMappings: {
          username: { expression: "'cel:' + claims.sub" },
          groups: { expression: "claims.roles.map(r, 'role:' + r)" },
          uid: { expression: "claims.sub + '-uid'" },
          extra: [
            { key: "example.com/tenant", valueExpression: "claims.tenant" },
            { key: "example.com/tags", valueExpression: "['a', '', 'b']" },
            { key: "example.com/none", valueExpression: "''" },
          ],
        },
      });
      const user = await authenticate(
        a,
        await token(ec, claims({ roles: ["admin", "viewer"], tenant: "t1" })),
      );
      assert.deepEqual(user, {
        username: "cel:alice",
        uid: "alice-uid",
        groups: ["role:admin", "role:viewer", "system:authenticated"],
        extra: { "example.com/tenant": ["t1"], "example.com/tags": ["a", "b"] },
      });
      // An expression that fails at run time (no such claim) rejects the token.
      assert.equal(await authenticate(a, await token(ec, claims({ tenant: "t1" }))), undefined);
    });

    const plain = authenticator();

    await t.step("a valid token", async () => {
      assert.deepEqual(await authenticate(plain, await token(rsa, claims())), {
        username: "alice",
        groups: ["system:authenticated"],
      });
      // aud may be a single string.
      assert.equal(
        (await authenticate(plain, await token(ec, claims({ aud: "platform" }))))?.username,
        "alice",
      );
    });

    await t.step("exp and nbf, with a little clock skew", async () => {
      assert.equal(
        await authenticate(plain, await token(rsa, claims({ exp: now() - 60 }))),
        undefined,
      );
      assert.equal(
        (await authenticate(plain, await token(rsa, claims({ exp: now() - 3 }))))?.username,
        "alice",
      );
      const noExp = claims();
      delete noExp.exp;
      assert.equal(await authenticate(plain, await token(rsa, noExp)), undefined);
      assert.equal(
        await authenticate(plain, await token(rsa, claims({ nbf: now() + 60 }))),
        undefined,
      );
      assert.equal(
        (await authenticate(plain, await token(rsa, claims({ nbf: now() + 3 }))))?.username,
        "alice",
      );
    });

    await t.step("signatures: wrong key, none, HMAC", async () => {
      const impostor = await signingKey("RS256", "rsa-1"); // same kid, other key
      assert.equal(await authenticate(plain, await token(impostor, claims())), undefined);
      const [h, p] = (await token(rsa, claims())).split(".");
      const none = btoa(JSON.stringify({ alg: "none", typ: "JWT" })).replace(/=+$/, "");
      assert.equal(await authenticate(plain, `${none}.${p}.`), undefined);
      assert.equal(await authenticate(plain, `${h}.${p}.`), undefined);
      const hmac = await new SignJWT(claims()).setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
        .sign(new TextEncoder().encode("a-shared-secret-of-enough-length!"));
      assert.equal(await authenticate(plain, hmac), undefined);
    });

    await t.step(
      "tokens of other issuers and non-JWTs are left to other authenticators",
      async () => {
        const before = issuer.jwksFetches;
        assert.equal(
          await authenticate(plain, await token(rsa, claims({ iss: "https://other.example.com" }))),
          undefined,
        );
        assert.equal(await authenticate(plain, "opaque-token"), undefined);
        assert.equal(await plain.authenticate(new Request("https://platform.example/")), undefined);
        assert.equal(issuer.jwksFetches, before);
      },
    );

    await t.step("audience must match one of the audiences", async () => {
      assert.equal(
        await authenticate(plain, await token(rsa, claims({ aud: ["someone-else"] }))),
        undefined,
      );
      const multi = authenticator({
        issuer: { audiences: ["a", "platform"], audienceMatchPolicy: "MatchAny" },
      });
      assert.equal(
        (await authenticate(multi, await token(rsa, claims({ aud: ["x", "platform"] }))))
          ?.username,
        "alice",
      );
    });

    await t.step("the username claim must be present and a string", async () => {
      const noSub = claims();
      delete noSub.sub;
      assert.equal(await authenticate(plain, await token(rsa, noSub)), undefined);
      assert.equal(
        await authenticate(plain, await token(rsa, claims({ sub: 42 as unknown as string }))),
        undefined,
      );
      assert.equal(await authenticate(plain, await token(rsa, claims({ sub: "" }))), undefined);
    });

    await t.step("claimValidationRules", async () => {
      const a = authenticator({
        claimValidationRules: [
          { claim: "hd", requiredValue: "example.com" },
          { expression: "claims.exp - claims.iat <= 600", message: "token lives too long" },
        ],
      });
      assert.equal(
        (await authenticate(a, await token(rsa, claims({ hd: "example.com" }))))?.username,
        "alice",
      );
      assert.equal(await authenticate(a, await token(rsa, claims({ hd: "other.com" }))), undefined);
      assert.equal(await authenticate(a, await token(rsa, claims())), undefined);
      assert.equal(
        await authenticate(a, await token(rsa, claims({ hd: "example.com", exp: now() + 3600 }))),
        undefined,
      );
      assert.ok(logLines.some((l) => l.includes("token lives too long")));
      // requiredValue absent: the claim must be there, empty.
      const empty = authenticator({
        issuer: { audiences: ["other"] },
        claimValidationRules: [{ claim: "tenant" }],
      });
      const aud = { aud: "other" };
      assert.equal(
        (await authenticate(empty, await token(rsa, claims({ ...aud, tenant: "" }))))?.username,
        "alice",
      );
      assert.equal(
        await authenticate(empty, await token(rsa, claims({ ...aud, tenant: "x" }))),
        undefined,
      );
    });

    await t.step("userValidationRules apply to the mapped user", async () => {
      const a = authenticator({
        claimMappings: { username: { claim: "sub", prefix: "" } },
        userValidationRules: [{
          expression: "!user.username.startsWith('system:')",
          message: "system names are reserved",
        }],
      });
      assert.equal((await authenticate(a, await token(rsa, claims())))?.username, "alice");
      assert.equal(
        await authenticate(a, await token(rsa, claims({ sub: "system:admin" }))),
        undefined,
      );
      assert.ok(logLines.some((l) => l.includes("system names are reserved")));
    });

    await t.step("email as username needs email_verified true when present", async () => {
      const a = authenticator({ claimMappings: { username: { claim: "email", prefix: "" } } });
      const email = "alice@example.com";
      assert.equal((await authenticate(a, await token(rsa, claims({ email }))))?.username, email);
      assert.equal(
        (await authenticate(a, await token(rsa, claims({ email, email_verified: true }))))
          ?.username,
        email,
      );
      assert.equal(
        await authenticate(a, await token(rsa, claims({ email, email_verified: false }))),
        undefined,
      );
      const byExpression = authenticator({
        claimMappings: {
          username: { expression: "claims.email_verified ? claims.email : 'unverified'" },
        },
      });
      assert.equal(
        (await authenticate(
          byExpression,
          await token(rsa, claims({ email, email_verified: true })),
        ))?.username,
        email,
      );
    });

    await t.step("discoveryURL: used as given; its issuer must equal url", async () => {
      const custom = authenticator({ issuer: { discoveryURL: `${issuer.url}/custom/discovery` } });
      assert.equal((await authenticate(custom, await token(rsa, claims())))?.username, "alice");
      const impostor = authenticator(
        { issuer: { discoveryURL: `${issuer.url}/impostor/discovery` } },
        { retryIntervalMs: 60_000 },
      );
      assert.equal(await authenticate(impostor, await token(rsa, claims())), undefined);
      assert.ok(logLines.some((l) => l.includes("does not match")));
    });

    await t.step("key rotation: an unknown kid refetches the key set", async () => {
      const a = authenticator();
      assert.equal((await authenticate(a, await token(rsa, claims())))?.username, "alice");
      const fetches = issuer.jwksFetches;
      const rotated = await signingKey("ES256", "ec-2");
      issuer.keys = [rotated];
      assert.equal((await authenticate(a, await token(rotated, claims())))?.username, "alice");
      assert.equal(issuer.jwksFetches, fetches + 1);
      // Still cached: no fetch for a known key.
      assert.equal((await authenticate(a, await token(rotated, claims())))?.username, "alice");
      assert.equal(issuer.jwksFetches, fetches + 1);
      issuer.keys = [rsa, ec];
    });

    await t.step("the unknown-kid refetch is rate limited", async () => {
      const a = authenticator({}, { jwksCooldownMs: 60_000 });
      assert.equal((await authenticate(a, await token(rsa, claims())))?.username, "alice");
      const fetches = issuer.jwksFetches;
      const stranger = await signingKey("RS256", "unknown");
      for (let i = 0; i < 3; i++) {
        assert.equal(await authenticate(a, await token(stranger, claims())), undefined);
      }
      assert.equal(issuer.jwksFetches, fetches);
    });

    await t.step("without certificateAuthority the self-signed issuer is not trusted", async () => {
      const untrusted = authenticator({ issuer: { certificateAuthority: undefined } }, {
        retryIntervalMs: 60_000,
      });
      assert.equal(untrusted.config.issuer.certificateAuthority, undefined);
      assert.equal(await authenticate(untrusted, await token(rsa, claims())), undefined);
      assert.ok(logLines.some((l) => l.includes("invalid peer certificate")));
    });

    await t.step("an issuer that is down is retried in the background", async () => {
      issuer.down = true;
      const a = authenticator({}, { retryIntervalMs: 20 });
      assert.equal(await authenticate(a, await token(rsa, claims())), undefined);
      issuer.down = false;
      const deadline = Date.now() + 5000;
      let user: UserInfo | undefined;
      while (!user && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        user = await authenticate(a, await token(rsa, claims()));
      }
      assert.equal(user?.username, "alice");
    });

    await t.step("log lines never carry a token or a part of one", () => {
      for (const tok of tokens) {
        const signature = tok.split(".")[2];
        for (const line of logLines) {
          assert.ok(!line.includes(tok) && !line.includes(signature), line);
        }
      }
    });
  } finally {
    for (const a of authenticators) a.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
