/**
 * OIDC sign-in through `--authentication-config`, as a user sees it over real HTTPS and the
 * real kubectl: a JWT of a configured issuer (a test issuer over HTTPS with its own CA) becomes
 * the user the claim mappings describe, RBAC judges that user, tokens failing any check get
 * 401, the file is reloaded when it changes (an invalid version is logged once and ignored),
 * anonymous access follows the file's `anonymous` section, and bad files stop `platform`
 * with exit code 2.
 */

import { join } from "node:path";
import { parse, stringify } from "yaml";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ROOT_CA_CONFIGMAP, runPlatform, type TestServer, testServer } from "./harness.ts";
import { kubectlFor, kubectlInstalled } from "./kubectl.ts";
import { ensurePki, type Pki } from "../lib/certificates/pki.ts";
import { ConfigError } from "../lib/config/mod.ts";
import { createLogger, silentLogger } from "../lib/api/log.ts";
import { startServer } from "../mod.ts";
import {
  Issuer,
  type Json,
  now,
  sign,
  type SigningKey,
  signingKey,
} from "../lib/auth/oidc_issuer_testdata.ts";

const WHOAMI = "/apis/authentication.platform.io/v1/selfsubjectreviews";
const UNAUTHORIZED = "error: You must be logged in to the server (Unauthorized)";
const NO_CREDENTIALS = "error: You must be logged in to the server " +
  "(the server has asked for the client to provide credentials)";
const FORBIDDEN_CM = "Error from server (Forbidden): configmaps is forbidden: " +
  'User "oidc:alice" cannot list resource "configmaps" in API group "" in the namespace "default"';

/** A temp dir, an OIDC issuer over HTTPS (its own CA) and its signing key. */
async function oidcFixture() {
  const dir = await Deno.makeTempDir({ prefix: "platform-oidc-test-" });
  const pki: Pki = await ensurePki({
    dataDir: join(dir, "issuer-pki"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: silentLogger,
  });
  const issuer = new Issuer(pki);
  const key = await signingKey("RS256", "key-1");
  issuer.keys = [key];
  const configPath = join(dir, "authentication-config.yaml");
  return {
    dir,
    pki,
    issuer,
    key,
    configPath,
    /** The claims of a valid token for alice; `extra` overrides or adds. */
    claims(extra: Json = {}): Json {
      return {
        iss: issuer.url,
        aud: "platform",
        sub: "alice",
        groups: ["dev", "ops"],
        hd: "example.com",
        tenant: "blue",
        iat: now(),
        exp: now() + 600,
        ...extra,
      };
    },
    /** A token signed by the issuer's key (or `by`). */
    token(extra: Json = {}, by: SigningKey = key): Promise<string> {
      return sign(by, this.claims(extra));
    },
    /** The configuration file: one JWT authenticator for the issuer, and `more` fields. */
    config(opts: { usernamePrefix?: string; more?: Json } = {}): Json {
      return {
        apiVersion: "apiserver.platform.io/v1beta1",
        kind: "AuthenticationConfiguration",
        jwt: [{
          issuer: {
            url: issuer.url,
            certificateAuthority: pki.caCertPem,
            audiences: ["platform"],
          },
          claimValidationRules: [{
            expression: "claims.hd == 'example.com'",
            message: "only example.com accounts",
          }],
          claimMappings: {
            username: { claim: "sub", prefix: opts.usernamePrefix ?? "oidc:" },
            groups: { claim: "groups", prefix: "oidc:" },
            uid: { expression: "'uid-' + claims.sub" },
            extra: [{ key: "example.com/tenant", valueExpression: "claims.tenant" }],
          },
          userValidationRules: [{
            expression: "!user.username.startsWith('oidc:system:')",
            message: "system: names are reserved",
          }],
        }],
        ...opts.more,
      };
    },
    /** Replaces the configuration file in one step (write, then rename), as editors do. */
    async write(doc: Json | string): Promise<void> {
      const tmp = `${configPath}.tmp`;
      await Deno.writeTextFile(tmp, typeof doc === "string" ? doc : stringify(doc));
      await Deno.rename(tmp, configPath);
    },
    async [Symbol.asyncDispose]() {
      await issuer[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function whoami(ts: TestServer, token: string | null) {
  return ts.json("POST", WHOAMI, {
    token,
    body: { apiVersion: "authentication.platform.io/v1", kind: "SelfSubjectReview" },
  });
}

/** Polls `probe` every 50ms until it returns true; fails after `ms`. */
async function eventually(probe: () => Promise<boolean>, what: string, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------
// Signing in

Deno.test({
  name: "oidc: a token of the issuer signs in as the mapped user, whom RBAC then judges",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using fx = await oidcFixture();
  await fx.write(fx.config());
  await using ts = await testServer({ authenticationConfigFile: fx.configPath });
  await using k = await kubectlFor(ts.server);
  const token = await fx.token();

  await t.step("SelfSubjectReview shows username, groups, uid and extra as mapped", async () => {
    const res = await whoami(ts, token);
    assertEquals(res.status, 201, JSON.stringify(res.body));
    assertEquals(res.body.status.userInfo, {
      username: "oidc:alice",
      uid: "uid-alice",
      groups: ["oidc:dev", "oidc:ops", "system:authenticated"],
      extra: { "example.com/tenant": ["blue"] },
    });
  });

  await t.step("a TokenReview of the token answers the same user", async () => {
    const res = await ts.json("POST", "/apis/authentication.platform.io/v1/tokenreviews", {
      body: { apiVersion: "authentication.platform.io/v1", kind: "TokenReview", spec: { token } },
    });
    assertEquals(res.status, 201, JSON.stringify(res.body));
    assertEquals(res.body.status.authenticated, true);
    assertEquals(res.body.status.user.username, "oidc:alice");
    assertEquals(res.body.status.user.groups, ["oidc:dev", "oidc:ops", "system:authenticated"]);
  });

  await t.step("kubectl auth whoami prints the mapped user", async () => {
    const out = await k.ok(["--token", token, "auth", "whoami"]);
    assertMatch(out, /^ATTRIBUTE\s+VALUE\n/);
    assertMatch(out, /\nUsername\s+oidc:alice\n/);
    assertMatch(out, /\nUID\s+uid-alice\n/);
    assertMatch(out, /\nGroups\s+\[oidc:dev oidc:ops system:authenticated\]\n/);
    assertMatch(out, /\nExtra: example\.com\/tenant\s+\[blue\]\n/);
  });

  await t.step("without a binding kubectl get is forbidden, in kube's words", async () => {
    const run = await k.kubectl(["--token", token, "get", "configmaps"]);
    assertEquals(run.code, 1);
    assertEquals(run.stderr.trim(), FORBIDDEN_CM);
    assertEquals(
      (await k.kubectl(["--token", token, "auth", "can-i", "list", "configmaps"])).stdout,
      "no\n",
    );
  });

  await t.step("a RoleBinding to view lets the user list, and only read", async () => {
    await k.ok(["create", "configmap", "settings", "--from-literal=color=blue"]);
    await k.ok(["create", "rolebinding", "alice-views", "--clusterrole=view", "--user=oidc:alice"]);
    const out = await k.ok(["--token", token, "get", "configmaps", "-o", "name"]);
    // Besides the namespace's kube-root-ca.crt, which view may read too.
    const own = out.split("\n").filter((l) => l && l !== `configmap/${ROOT_CA_CONFIGMAP}`);
    assertEquals(own, ["configmap/settings"]);
    assertEquals(await k.ok(["--token", token, "auth", "can-i", "list", "configmaps"]), "yes\n");
    const create = await k.kubectl(["--token", token, "auth", "can-i", "create", "configmaps"]);
    assertEquals([create.code, create.stdout], [1, "no\n"]);
    // Elsewhere the binding does not reach.
    const other = await k.kubectl(["--token", token, "get", "configmaps", "-n", "kube-public"]);
    assertEquals(other.code, 1);
    assertMatch(other.stderr, /User "oidc:alice" cannot list resource "configmaps"/);
  });

  await t.step("groups from the token are RBAC subjects too", async () => {
    const bob = await fx.token({ sub: "bob", groups: ["ops"] });
    const before = await k.kubectl(["--token", bob, "get", "configmaps", "-n", "kube-public"]);
    assertEquals(before.code, 1);
    await k.ok(["create", "namespace", "ops-space"]);
    await k.ok([
      "create",
      "rolebinding",
      "ops-view",
      "-n",
      "ops-space",
      "--clusterrole=view",
      "--group=oidc:ops",
    ]);
    assertEquals(
      await k.ok(["--token", bob, "auth", "can-i", "list", "configmaps", "-n", "ops-space"]),
      "yes\n",
    );
  });
});

Deno.test({
  name: "oidc: a token failing any check is 401 (kubectl: You must be logged in)",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using fx = await oidcFixture();
  await fx.write(fx.config());
  await using ts = await testServer({ authenticationConfigFile: fx.configPath });
  await using k = await kubectlFor(ts.server);
  const stranger = await signingKey("RS256", "key-1"); // same kid, not the issuer's key

  // The same issuer and server accept a good token: the failures below are the checks'.
  assertEquals((await whoami(ts, await fx.token())).status, 201);

  const cases: [string, Promise<string>][] = [
    ["expired", fx.token({ iat: now() - 3600, exp: now() - 120 })],
    ["not yet valid", fx.token({ nbf: now() + 3600 })],
    ["without exp", fx.token({ exp: undefined })],
    ["for another audience", fx.token({ aud: "someone-else" })],
    ["signed by another key", fx.token({}, stranger)],
    ["of an unknown issuer", fx.token({ iss: "https://unknown.example.com" })],
    ["failing the claim validation rule", fx.token({ hd: "evil.example.com" })],
    ["failing the user validation rule", fx.token({ sub: "system:admin" })],
    ["whose username claim is not a string", fx.token({ sub: 42 })],
  ];
  for (const [what, pending] of cases) {
    const token = await pending;
    await t.step(what, async () => {
      const res = await whoami(ts, token);
      assertEquals(res.status, 401, JSON.stringify(res.body));
      assertEquals(res.body.kind, "Status");
      assertEquals(res.body.reason, "Unauthorized");
      // Nothing about the token comes back.
      assertEquals(res.body.message, "Unauthorized");
      // kubectl's typed clients show the Status message …
      const typed = await k.kubectl(["--token", token, "auth", "whoami"]);
      assertEquals([typed.code, typed.stderr.trim()], [1, UNAUTHORIZED]);
      // … and its discovery client its own words for a 401, as against kube.
      const get = await k.kubectl(["--token", token, "get", "configmaps"]);
      assertEquals(get.code, 1);
      assertEquals(get.stderr.trimEnd().split("\n").at(-1), NO_CREDENTIALS);
    });
  }
});

// ---------------------------------------------------------------------------------------
// Reloading

Deno.test({
  name: "oidc: a changed file applies within seconds; an invalid one is logged once and ignored",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using fx = await oidcFixture();
  await fx.write(fx.config());
  const lines: string[] = [];
  await using ts = await testServer({
    authenticationConfigFile: fx.configPath,
    logger: createLogger("info", (line) => lines.push(line)),
  });
  await using k = await kubectlFor(ts.server);
  const token = await fx.token();
  const username = async () => (await whoami(ts, token)).body?.status?.userInfo?.username;
  assertEquals(await username(), "oidc:alice");

  await fx.write(fx.config({ usernamePrefix: "sso:" }));
  await eventually(async () => await username() === "sso:alice", "the new prefix");
  assertMatch(await k.ok(["--token", token, "auth", "whoami"]), /\nUsername\s+sso:alice\n/);
  assert(lines.some((l) => l.includes(`authentication config ${fx.configPath} reloaded`)));

  // A CEL syntax error: the file is refused as a whole, the previous mapping stays.
  const invalid = fx.config({ usernamePrefix: "broken:" });
  ((invalid.jwt as Json[])[0].claimMappings as Json).uid = { expression: "'uid-' + " };
  await fx.write(invalid);
  const errors = () => lines.filter((l) => /\bERROR\b/.test(l));
  await eventually(() => Promise.resolve(errors().length > 0), "the error line");
  assertEquals(await username(), "sso:alice");
  // Across more polls of the unchanged file (every second): still the old mapping.
  for (const until = Date.now() + 1500; Date.now() < until; await delay(100)) {
    assertEquals(await username(), "sso:alice");
  }
  // … and still the one line.
  assertEquals(errors().length, 1, errors().join("\n"));
  const [line] = errors();
  assertMatch(line, /authentication config not reloaded, the previous one stays in force/);
  assert(line.includes(fx.configPath), line);
  assert(line.includes("jwt[0].claimMappings.uid.expression"), line);
  assert(!line.includes(token), "the log never shows a token");
  assertMatch(await k.ok(["--token", token, "auth", "whoami"]), /\nUsername\s+sso:alice\n/);

  // Fixed again: applies as usual.
  await fx.write(fx.config({ usernamePrefix: "corp:" }));
  await eventually(async () => await username() === "corp:alice", "the fixed file");
});

// ---------------------------------------------------------------------------------------
// Anonymous access

Deno.test("anonymous: with conditions only those paths are served without credentials", async () => {
  await using fx = await oidcFixture();
  await fx.write(fx.config({
    more: { anonymous: { enabled: true, conditions: [{ path: "/livez" }, { path: "/readyz" }] } },
  }));
  await using ts = await testServer({ authenticationConfigFile: fx.configPath });

  for (const path of ["/livez", "/readyz"]) {
    const res = await ts.request("GET", path, { token: null });
    assertEquals([res.status, await res.text()], [200, "ok"], path);
  }
  // The configuration alone decides: the other probe and version paths are no exception.
  for (const path of ["/api/v1/namespaces", "/version", "/healthz", "/livez/ping"]) {
    const res = await ts.json("GET", path, { token: null });
    assertEquals(res.status, 401, path);
    assertEquals(res.body.reason, "Unauthorized");
  }
  // A credential nobody recognises is never taken for anonymous.
  const bad = await ts.request("GET", "/livez", { token: "not-a-token" });
  assertEquals(bad.status, 401);
  await bad.body?.cancel();
  // Tokens still work alongside.
  assertEquals((await whoami(ts, await fx.token())).status, 201);

  // /livez is served as system:anonymous, whom the authorizers judge: without the default
  // binding of system:public-info-viewer to system:unauthenticated, RBAC says no.
  const binding = "/apis/rbac.authorization.platform.io/v1/clusterrolebindings/" +
    "system:public-info-viewer";
  assertEquals((await ts.json("DELETE", binding)).status, 200);
  let livez: { status: number; body: Json } | undefined;
  await eventually(async () => {
    livez = await ts.json("GET", "/livez", { token: null });
    return livez.status === 403;
  }, "RBAC to see the deleted binding");
  assertEquals(livez!.body.message, 'forbidden: User "system:anonymous" cannot get path "/livez"');
});

Deno.test("anonymous: without the section probes are public; enabled: false closes them", async () => {
  await using fx = await oidcFixture();
  await fx.write(fx.config());
  {
    await using ts = await testServer({ authenticationConfigFile: fx.configPath });
    for (const path of ["/livez", "/readyz", "/healthz", "/version"]) {
      const res = await ts.request("GET", path, { token: null });
      assertEquals(res.status, 200, path);
      await res.body?.cancel();
    }
    assertEquals((await ts.json("GET", "/api/v1/namespaces", { token: null })).status, 401);
  }
  await fx.write(fx.config({ more: { anonymous: { enabled: false } } }));
  {
    await using ts = await testServer({ authenticationConfigFile: fx.configPath });
    for (const path of ["/livez", "/version", "/api/v1/namespaces"]) {
      assertEquals((await ts.json("GET", path, { token: null })).status, 401, path);
    }
    assertEquals((await whoami(ts, await fx.token())).status, 201);
  }
});

Deno.test("anonymous: enabled without conditions, system:anonymous is judged by RBAC", async () => {
  await using fx = await oidcFixture();
  await fx.write(fx.config({ more: { anonymous: { enabled: true } } }));
  await using ts = await testServer({ authenticationConfigFile: fx.configPath });

  const namespaces = await ts.json("GET", "/api/v1/namespaces", { token: null });
  assertEquals(namespaces.status, 403);
  assertEquals(
    namespaces.body.message,
    'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in ' +
      'API group "" at the cluster scope',
  );
  // system:public-info-viewer is bound to system:unauthenticated.
  const version = await ts.json("GET", "/version", { token: null });
  assertEquals(version.status, 200);
  assert(typeof version.body.gitVersion === "string", JSON.stringify(version.body));
  // Discovery is for system:authenticated only (system:discovery).
  const discovery = await ts.json("GET", "/apis", { token: null });
  assertEquals(discovery.status, 403);
  assertMatch(discovery.body.message, /User "system:anonymous" cannot get path "\/apis"/);
});

Deno.test("anonymous: --anonymous-auth=true without a file serves every path anonymously", async () => {
  await using ts = await testServer({ anonymousAuth: true });
  const namespaces = await ts.json("GET", "/api/v1/namespaces", { token: null });
  assertEquals(namespaces.status, 403);
  assertMatch(namespaces.body.message, /User "system:anonymous" cannot list resource "namespaces"/);
  assertEquals((await ts.json("GET", "/version", { token: null })).status, 200);
  const bad = await ts.request("GET", "/version", { token: "not-a-token" });
  assertEquals(bad.status, 401);
  await bad.body?.cancel();
});

Deno.test("anonymous: --anonymous-auth with a file that configures anonymous is refused", async (t) => {
  await using fx = await oidcFixture();
  await fx.write(fx.config({ more: { anonymous: { enabled: true } } }));
  const message = `${fx.configPath}: anonymous: Forbidden: --anonymous-auth flag cannot be set ` +
    "when anonymous field is configured in authentication configuration file";

  await t.step("startServer throws a ConfigError", async () => {
    for (const anonymousAuth of [true, false]) {
      let thrown: unknown;
      try {
        const server = await startServer({
          storage: "memory",
          logger: silentLogger,
          authenticationConfigFile: fx.configPath,
          anonymousAuth,
        });
        await server.close();
      } catch (err) {
        thrown = err;
      }
      assert(thrown instanceof ConfigError, `anonymousAuth ${anonymousAuth}: ${thrown}`);
      assertEquals(thrown.message, message);
    }
  });

  await t.step("platform serve exits 2 with one line and leaves no trace", async () => {
    const dataDir = join(fx.dir, "data");
    const run = await runPlatform(
      "serve",
      "--authentication-config",
      fx.configPath,
      "--anonymous-auth=true",
      "--data-dir",
      dataDir,
      "--secure-port",
      "0",
    );
    assertEquals(run.code, 2, run.stderr);
    assertEquals(run.stderr, `platform: ${message}\n`);
    let exists = true;
    await Deno.stat(dataDir).catch(() => exists = false);
    assert(!exists, "the data directory was created");
  });
});

// ---------------------------------------------------------------------------------------
// Invalid files

Deno.test("check-config: a CEL error names the file, the field and the position", async () => {
  await using fx = await oidcFixture();
  const config = fx.config();
  ((config.jwt as Json[])[0].claimMappings as Json).username = {
    expression: "claims.sub +",
  };
  await fx.write(config);
  const run = await runPlatform("check-config", "--authentication-config", fx.configPath);
  assertEquals(run.code, 2, run.stderr);
  const lines = run.stderr.trimEnd().split("\n");
  assertEquals(lines.length, 1, run.stderr);
  assertMatch(
    lines[0],
    new RegExp(
      `^platform: ${RegExp.escape(fx.configPath)}: jwt\\[0\\]\\.claimMappings\\.username\\.` +
        `expression: Invalid value: "claims\\.sub \\+": compilation failed at line 1, column \\d+: `,
    ),
  );
  assertEquals(run.stdout, "");

  // The same file given to serve: exit 2, the same line.
  const serve = await runPlatform(
    "serve",
    "--authentication-config",
    fx.configPath,
    "--data-dir",
    join(fx.dir, "data"),
    "--secure-port",
    "0",
  );
  assertEquals(serve.code, 2, serve.stderr);
  assertEquals(serve.stderr, run.stderr);
});

Deno.test({
  name: "the README's OIDC + RBAC setup works with the files in config/ as documented",
  ignore: !kubectlInstalled,
  async fn() {
    await using f = await oidcFixture();
    // Step 1: the example file with the issuer's url and CA filled in, nothing else changed.
    const example = parse(
      await Deno.readTextFile(new URL("../config/authentication-config.yaml", import.meta.url)),
    ) as Json & { jwt: { issuer: Json }[] };
    example.jwt[0].issuer.url = f.issuer.url;
    example.jwt[0].issuer.certificateAuthority = f.pki.caCertPem;
    await f.write(example);
    // Step 2: start with it, apply config/oidc-rbac.yaml as the admin.
    await using ts = await testServer({ authenticationConfigFile: f.configPath });
    await using k = await kubectlFor(ts.server);
    await k.ok(["apply", "-f", new URL("../config/oidc-rbac.yaml", import.meta.url).pathname]);
    // Step 3: an ID token of a member of "developers", as the issuer would give it.
    const iat = now();
    const token = await sign(f.key, {
      iss: f.issuer.url,
      aud: ["platform"],
      sub: "0001",
      email: "alice@example.com",
      email_verified: true,
      hd: "example.com",
      groups: ["developers"],
      iat,
      exp: iat + 3600,
    });
    await k.ok(["config", "set-credentials", "alice", "--token", token]);
    await k.ok(["config", "set-context", "alice", "--cluster", "platform", "--user", "alice"]);
    const who = await k.ok(["--context", "alice", "auth", "whoami"]);
    assertMatch(who, /Username\s+alice@example\.com/);
    assertMatch(who, /Groups\s+\[oidc:developers system:authenticated\]/);
    await k.ok(["--context", "alice", "-n", "dev", "create", "configmap", "notes"]);
    await k.ok(["--context", "alice", "get", "namespaces"]);
    const denied = await k.kubectl(["--context", "alice", "-n", "default", "get", "configmaps"]);
    assertEquals(denied.code, 1);
    assertEquals(
      denied.stderr.trim(),
      "Error from server (Forbidden): configmaps is forbidden: " +
        'User "alice@example.com" cannot list resource "configmaps" in API group "" in the ' +
        'namespace "default"',
    );
  },
});
