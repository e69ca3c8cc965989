import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../config/mod.ts";
import { ensurePki } from "../certificates/pki.ts";
import {
  type AuthenticationConfig,
  AuthenticationConfigError,
  loadAuthenticationConfig,
  parseAuthenticationConfig,
} from "./authentication_config.ts";

const FILE = "auth.yaml";
const URL_A = "https://issuer.example.com";

type Json = Record<string, unknown>;

/** A valid JWT authenticator entry, with `patch` merged in one level deep. */
function entry(patch: Json = {}): Json {
  const base: Json = {
    issuer: { url: URL_A, audiences: ["platform"] },
    claimMappings: { username: { claim: "sub", prefix: "oidc:" } },
  };
  for (const [k, v] of Object.entries(patch)) {
    base[k] = v && typeof v === "object" && !Array.isArray(v) && base[k]
      ? { ...(base[k] as Json), ...(v as Json) }
      : v;
  }
  return base;
}

function doc(jwt: Json[], extra: Json = {}): Json {
  return {
    apiVersion: "apiserver.platform.io/v1beta1",
    kind: "AuthenticationConfiguration",
    jwt,
    ...extra,
  };
}

function parse(d: Json | string, opts = {}): AuthenticationConfig {
  return parseAuthenticationConfig(typeof d === "string" ? d : JSON.stringify(d), FILE, opts);
}

/** The error lines of an invalid document; [] when it is valid. */
function errorsOf(d: Json | string, opts = {}): string[] {
  try {
    parse(d, opts);
    return [];
  } catch (err) {
    if (err instanceof AuthenticationConfigError) return err.errors;
    throw err;
  }
}

/** Asserts that the document's errors are exactly `expected` (without the file prefix). */
function assertErrors(d: Json | string, expected: string[], opts = {}) {
  assert.deepEqual(errorsOf(d, opts), expected.map((e) => `${FILE}: ${e}`));
}

Deno.test("a minimal file is valid; jwt and anonymous may be absent", () => {
  const cfg = parse(doc([entry()]));
  assert.deepEqual(cfg.jwt[0].issuer, { url: URL_A, audiences: ["platform"] });
  assert.deepEqual(cfg.jwt[0].claimMappings.username, { claim: "sub", prefix: "oidc:" });
  assert.deepEqual(cfg.anonymous, undefined);
  assert.deepEqual(
    parse({ apiVersion: "apiserver.platform.io/v1beta1", kind: "AuthenticationConfiguration" }),
    { jwt: [] },
  );
});

Deno.test("the example in config/ is valid", async () => {
  const path = fileURLToPath(new URL("../../config/authentication-config.yaml", import.meta.url));
  const cfg = await loadAuthenticationConfig(path);
  assert.deepEqual(cfg.jwt[0].issuer.audiences, ["platform", "platform-cli"]);
  assert.deepEqual(cfg.anonymous, {
    enabled: true,
    conditions: [{ path: "/livez" }, { path: "/readyz" }],
  });
});

Deno.test("apiVersion: ours and kube's spellings; kind", () => {
  for (
    const v of [
      "apiserver.config.k8s.io/v1",
      "apiserver.config.k8s.io/v1beta1",
      "apiserver.config.k8s.io/v1alpha1",
    ]
  ) {
    assert.deepEqual(errorsOf({ ...doc([entry()]), apiVersion: v }), []);
  }
  assertErrors({ kind: "AuthenticationConfiguration" }, ["apiVersion: Required value"]);
  assertErrors({ ...doc([]), apiVersion: "v1" }, [
    'apiVersion: Unsupported value: "v1": supported values: "apiserver.platform.io/v1beta1", ' +
    '"apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", ' +
    '"apiserver.config.k8s.io/v1alpha1"',
  ]);
  assertErrors({ ...doc([]), kind: "AuthorizationConfiguration" }, [
    'kind: Unsupported value: "AuthorizationConfiguration": supported values: ' +
    '"AuthenticationConfiguration"',
  ]);
});

Deno.test("unknown fields and wrong types are errors at their path", () => {
  assertErrors({ ...doc([entry({ issuer: { egressSelectorType: "cluster" } })]), extra: 1 }, [
    "extra: unknown field",
    "jwt[0].issuer.egressSelectorType: unknown field",
  ]);
  assertErrors(doc([entry({ issuer: { audiences: "platform" } })]), [
    'jwt[0].issuer.audiences: Invalid value: "platform": must be a list',
    "jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required",
  ]);
  assertErrors({ ...doc([]), jwt: { a: 1 } }, [
    'jwt: Invalid value: "<mapping>": must be a list',
  ]);
});

Deno.test("every error of a file is reported, each with the file and path", () => {
  assertErrors(
    doc([
      entry({ issuer: { url: "http://a.example.com", audiences: [] } }),
      entry({ claimMappings: { username: { claim: "sub" } } }),
    ]),
    [
      'jwt[0].issuer.url: Invalid value: "http://a.example.com": URL scheme must be https',
      "jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required",
      "jwt[1].claimMappings.username.prefix: Required value: prefix is required when claim is " +
      "set. It can be set to an empty string to disable prefixing",
    ],
  );
});

Deno.test("YAML errors and empty files", () => {
  const errs = errorsOf("jwt: [\n");
  assert.deepEqual(errs.length, 1);
  assert.ok(errs[0].startsWith(`${FILE}:`) && errs[0].includes("invalid YAML"), errs[0]);
  assertErrors("", [
    "the file is empty; expected apiVersion: apiserver.platform.io/v1beta1 and kind: " +
    "AuthenticationConfiguration",
  ]);
  assert.throws(() => parse("kind: [\n"), AuthenticationConfigError);
  assertErrors("- jwt: []", ["expected a mapping at the top level"]);
});

Deno.test("loadAuthenticationConfig reads the file and names it", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "auth.yaml");
  await assert.rejects(
    () => loadAuthenticationConfig(path),
    new ConfigError(`--authentication-config: cannot read "${path}": No such file or directory`),
  );
  await Deno.writeTextFile(path, JSON.stringify(doc([entry({ issuer: { url: "" } })])));
  await assert.rejects(
    () => loadAuthenticationConfig(path),
    (err) =>
      err instanceof ConfigError && err.message === `${path}: jwt[0].issuer.url: Required value`,
  );
});

Deno.test("jwt: at most 64 authenticators", () => {
  const many = Array.from(
    { length: 65 },
    (_, i) => entry({ issuer: { url: `https://issuer${i}.example.com` } }),
  );
  assertErrors(doc(many), ["jwt: Too many: 65: must have at most 64 items"]);
  assert.deepEqual(errorsOf(doc(many.slice(0, 64))), []);
});

Deno.test("issuer.url: required, https, no user info, query or fragment, unique", () => {
  const url = (u: string) => doc([entry({ issuer: { url: u } })]);
  assertErrors(url(""), ["jwt[0].issuer.url: Required value"]);
  assertErrors(doc([entry({ issuer: { audiences: ["a"], url: undefined } })]), [
    "jwt[0].issuer.url: Required value",
  ]);
  assertErrors(url("http://x.example.com"), [
    'jwt[0].issuer.url: Invalid value: "http://x.example.com": URL scheme must be https',
  ]);
  assertErrors(url("x.example.com"), [
    'jwt[0].issuer.url: Invalid value: "x.example.com": URL scheme must be https',
  ]);
  assertErrors(url("https://u:p@x.example.com"), [
    'jwt[0].issuer.url: Invalid value: "https://u:p@x.example.com": URL must not contain a ' +
    "username or password",
  ]);
  assertErrors(url("https://x.example.com/?a=b#c"), [
    'jwt[0].issuer.url: Invalid value: "https://x.example.com/?a=b#c": URL must not contain a ' +
    "query",
    'jwt[0].issuer.url: Invalid value: "https://x.example.com/?a=b#c": URL must not contain a ' +
    "fragment",
  ]);
  assert.deepEqual(errorsOf(url("https://x.example.com/tenant/1")), []);
  assertErrors(doc([entry(), entry()]), [
    `jwt[1].issuer.url: Duplicate value: "${URL_A}"`,
  ]);
  assertErrors(doc([entry()]), [
    `jwt[0].issuer.url: Invalid value: "${URL_A}": URL must not overlap with disallowed ` +
    `issuers: [${URL_A} https://z.example.com]`,
  ], { disallowedIssuers: ["https://z.example.com", URL_A] });
});

Deno.test("issuer.discoveryURL: https, differs from url, unique", () => {
  const d = (u: string, url = URL_A) => entry({ issuer: { url, discoveryURL: u } });
  assert.deepEqual(errorsOf(doc([d("https://idp.internal/.well-known/openid-configuration")])), []);
  assertErrors(doc([d(`${URL_A}/`)]), [
    `jwt[0].issuer.discoveryURL: Invalid value: "${URL_A}/": discoveryURL must be different ` +
    "from URL",
  ]);
  assertErrors(doc([d("http://idp.internal/x")]), [
    'jwt[0].issuer.discoveryURL: Invalid value: "http://idp.internal/x": URL scheme must be ' +
    "https",
  ]);
  assertErrors(
    doc([d("https://idp.internal/x"), d("https://idp.internal/x", "https://b.example.com")]),
    ['jwt[1].issuer.discoveryURL: Duplicate value: "https://idp.internal/x"'],
  );
});

Deno.test("issuer.certificateAuthority: a PEM bundle of certificates", async () => {
  await using dir = await tempDir();
  const pki = await ensurePki({ dataDir: dir.path, sans: [], bindAddress: "127.0.0.1" });
  const ca = (pem: string) => doc([entry({ issuer: { certificateAuthority: pem } })]);
  assert.deepEqual(parse(ca(pki.caCertPem)).jwt[0].issuer.certificateAuthority, pki.caCertPem);
  assertErrors(ca("not a certificate"), [
    'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any ' +
    "valid RSA or ECDSA certificates",
  ]);
  assertErrors(ca("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), [
    'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": certificate 1 does not ' +
    "parse",
  ]);
});

Deno.test("issuer.audiences and audienceMatchPolicy", () => {
  const aud = (audiences: unknown, policy?: string) =>
    doc([entry({ issuer: { audiences, audienceMatchPolicy: policy } })]);
  assertErrors(aud([]), [
    "jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required",
  ]);
  assertErrors(aud(["a", ""], "MatchAny"), ["jwt[0].issuer.audiences[1]: Required value"]);
  assertErrors(aud(["a", "a"], "MatchAny"), [
    'jwt[0].issuer.audiences[1]: Duplicate value: "a"',
  ]);
  assertErrors(aud(["a", "b"]), [
    'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be ' +
    "MatchAny for multiple audiences",
  ]);
  assertErrors(aud(["a"], "MatchAll"), [
    'jwt[0].issuer.audienceMatchPolicy: Invalid value: "MatchAll": audienceMatchPolicy must be ' +
    "empty or MatchAny for single audience",
  ]);
  assert.deepEqual(errorsOf(aud(["a"], "MatchAny")), []);
  assert.deepEqual(parse(aud(["a", "b"], "MatchAny")).jwt[0].issuer.audiences, ["a", "b"]);
});

Deno.test("claimValidationRules: claim xor expression, their companions, duplicates", () => {
  const rules = (...r: Json[]) => doc([entry({ claimValidationRules: r })]);
  const cfg = parse(rules({ claim: "hd", requiredValue: "example.com" }, { claim: "tenant" }, {
    expression: "claims.exp - claims.nbf <= 86400",
    message: "too long",
  }));
  const [a, b, c] = cfg.jwt[0].claimValidationRules;
  assert.deepEqual([a, b], [{ claim: "hd", requiredValue: "example.com" }, {
    claim: "tenant",
    requiredValue: "",
  }]);
  assert.ok("expression" in c && c.message === "too long");

  const P = "jwt[0].claimValidationRules";
  assertErrors(rules({ claim: "hd", expression: "true" }), [
    `${P}[0]: Invalid value: "hd": claim and expression can't both be set`,
  ]);
  assertErrors(rules({ requiredValue: "x" }), [
    `${P}[0]: Required value: claim or expression is required`,
  ]);
  assertErrors(rules({ claim: "hd", message: "m" }), [
    `${P}[0].message: Invalid value: "m": may not be specified when claim is set`,
  ]);
  assertErrors(rules({ expression: "true", requiredValue: "x" }), [
    `${P}[0].requiredValue: Invalid value: "x": may not be specified when expression is set`,
  ]);
  assertErrors(rules({ claim: "hd" }, { claim: "hd", requiredValue: "x" }), [
    `${P}[1].claim: Duplicate value: "hd"`,
  ]);
  assertErrors(rules({ expression: "true" }, { expression: "true" }), [
    `${P}[1].expression: Duplicate value: "true"`,
  ]);
  // Claims are dynamic: only an expression that cannot be a boolean is refused at load.
  const [wrongType] = errorsOf(rules({ expression: "'yes'" }));
  assert.ok(
    wrongType.startsWith(`${FILE}: ${P}[0].expression: Invalid value: "'yes'": `),
    wrongType,
  );
});

Deno.test("a CEL compile error names the file, the field path and the position", () => {
  const errs = errorsOf(
    doc([entry({ claimMappings: { username: { expression: "claims.sub +" } } })]),
  );
  assert.deepEqual(errs.length, 1);
  assert.ok(
    errs[0].startsWith(
      `${FILE}: jwt[0].claimMappings.username.expression: Invalid value: "claims.sub +": ` +
        "compilation failed at line 1, column ",
    ),
    errs[0],
  );
});

Deno.test("claimMappings.username: required; claim with prefix xor expression", () => {
  const u = (username: unknown) => doc([entry({ claimMappings: { username } })]);
  const P = "jwt[0].claimMappings.username";
  assert.deepEqual(parse(u({ claim: "sub", prefix: "" })).jwt[0].claimMappings.username, {
    claim: "sub",
    prefix: "",
  });
  const byExpression = parse(u({ expression: "'x:' + claims.sub" })).jwt[0].claimMappings.username;
  assert.ok("expression" in byExpression);
  assertErrors(doc([{ issuer: { url: URL_A, audiences: ["a"] }, claimMappings: {} }]), [
    `${P}: Required value: claim or expression is required`,
  ]);
  assertErrors(doc([{ issuer: { url: URL_A, audiences: ["a"] } }]), [
    `${P}: Required value: claim or expression is required`,
  ]);
  assertErrors(u({ claim: "sub" }), [
    `${P}.prefix: Required value: prefix is required when claim is set. It can be set to an ` +
    "empty string to disable prefixing",
  ]);
  assertErrors(u({ claim: "sub", prefix: "", expression: "claims.sub" }), [
    `${P}: Invalid value: "": claim and expression can't both be set`,
  ]);
  assertErrors(u({ expression: "claims.sub", prefix: "x:" }), [
    `${P}.prefix: Invalid value: "x:": may not be specified when expression is set`,
  ]);
  const [notString] = errorsOf(u({ expression: "claims.sub == 'a'" }));
  assert.ok(notString.startsWith(`${FILE}: ${P}.expression: Invalid value: `), notString);
});

Deno.test("claimMappings.groups: optional; same rules as username", () => {
  const g = (groups: unknown) =>
    doc([entry({ claimMappings: { username: { expression: "claims.sub" }, groups } })]);
  const P = "jwt[0].claimMappings.groups";
  assert.deepEqual(parse(g({ claim: "groups", prefix: "oidc:" })).jwt[0].claimMappings.groups, {
    claim: "groups",
    prefix: "oidc:",
  });
  assert.ok("expression" in parse(g({ expression: "claims.roles" })).jwt[0].claimMappings.groups!);
  assert.deepEqual(parse(g({})).jwt[0].claimMappings.groups, undefined);
  assertErrors(g({ claim: "groups" }), [
    `${P}.prefix: Required value: prefix is required when claim is set. It can be set to an ` +
    "empty string to disable prefixing",
  ]);
  assertErrors(g({ claim: "groups", expression: "claims.groups" }), [
    `${P}: Invalid value: "": claim and expression can't both be set`,
  ]);
  assertErrors(g({ expression: "claims.groups", prefix: "" }), [
    `${P}.prefix: Invalid value: "": may not be specified when expression is set`,
  ]);
  const [notList] = errorsOf(g({ expression: "1 + 1" }));
  assert.ok(notList.startsWith(`${FILE}: ${P}.expression: Invalid value: "1 + 1": `), notList);
});

Deno.test("claimMappings.uid: claim xor expression", () => {
  const u = (uid: unknown) =>
    doc([entry({ claimMappings: { username: { claim: "sub", prefix: "" }, uid } })]);
  assert.deepEqual(parse(u({ claim: "oid" })).jwt[0].claimMappings.uid, { claim: "oid" });
  assert.ok("expression" in parse(u({ expression: "claims.oid" })).jwt[0].claimMappings.uid!);
  assert.deepEqual(parse(u({})).jwt[0].claimMappings.uid, undefined);
  assertErrors(u({ claim: "oid", expression: "claims.oid" }), [
    `jwt[0].claimMappings.uid: Invalid value: "": claim and expression can't both be set`,
  ]);
  const [notString] = errorsOf(u({ expression: "[claims.oid]" }));
  assert.ok(notString.startsWith(`${FILE}: jwt[0].claimMappings.uid.expression: `), notString);
});

Deno.test("claimMappings.extra: domain-prefixed lowercase keys, unique, with an expression", () => {
  const x = (...extra: Json[]) =>
    doc([entry({ claimMappings: { username: { claim: "sub", prefix: "" }, extra } })]);
  const P = "jwt[0].claimMappings.extra";
  const ok = parse(x({ key: "example.com/tenant", valueExpression: "claims.tenant" }));
  assert.deepEqual(ok.jwt[0].claimMappings.extra.map((e) => e.key), ["example.com/tenant"]);
  assertErrors(x({ valueExpression: "'a'" }), [`${P}[0].key: Required value`]);
  assertErrors(x({ key: "tenant", valueExpression: "'a'" }), [
    `${P}[0].key: Invalid value: "tenant": must be a domain-prefixed path (such as "acme.io/foo")`,
  ]);
  assertErrors(x({ key: "example.com/", valueExpression: "'a'" }), [
    `${P}[0].key: Invalid value: "example.com/": must be a domain-prefixed path (such as ` +
    '"acme.io/foo")',
  ]);
  assertErrors(x({ key: "Example.com/tenant", valueExpression: "'a'" }), [
    `${P}[0].key: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of ` +
    "lower case alphanumeric characters, '-' or '.', and must start and end with an " +
    "alphanumeric character (e.g. 'example.com', regex used for validation is " +
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    `${P}[0].key: Invalid value: "Example.com/tenant": must be lowercase`,
  ]);
  assertErrors(x({ key: "example.com/Tenant", valueExpression: "'a'" }), [
    `${P}[0].key: Invalid value: "example.com/Tenant": must be lowercase`,
  ]);
  assertErrors(x({ key: "example.com/a b", valueExpression: "'a'" }), [
    `${P}[0].key: Invalid value: "a b": Invalid path (regex used for validation is ` +
    "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
  ]);
  for (const key of ["kubernetes.io/x", "k8s.io/x", "authentication.kubernetes.io/x"]) {
    assertErrors(x({ key, valueExpression: "'a'" }), [
      `${P}[0].key: Invalid value: "${key}": k8s.io, kubernetes.io and their subdomains are ` +
      "reserved for Kubernetes use",
    ]);
  }
  assert.deepEqual(errorsOf(x({ key: "notkubernetes.io/x", valueExpression: "'a'" })), []);
  assertErrors(
    x({ key: "example.com/a", valueExpression: "'a'" }, {
      key: "example.com/a",
      valueExpression: "'b'",
    }),
    [`${P}[1].key: Duplicate value: "example.com/a"`],
  );
  assertErrors(x({ key: "example.com/a" }), [`${P}[0].valueExpression: Required value`]);
  const [notList] = errorsOf(x({ key: "example.com/a", valueExpression: "1" }));
  assert.ok(notList.startsWith(`${FILE}: ${P}[0].valueExpression: Invalid value: "1": `), notList);
});

Deno.test("userValidationRules: expression required, unique, boolean", () => {
  const r = (...userValidationRules: Json[]) => doc([entry({ userValidationRules })]);
  const P = "jwt[0].userValidationRules";
  const cfg = parse(r({ expression: "!user.username.startsWith('system:')", message: "no" }));
  assert.deepEqual(cfg.jwt[0].userValidationRules[0].message, "no");
  assertErrors(r({ message: "x" }), [`${P}[0].expression: Required value`]);
  assertErrors(r({ expression: "true" }, { expression: "true" }), [
    `${P}[1].expression: Duplicate value: "true"`,
  ]);
  const [notBool] = errorsOf(r({ expression: "user.username" }));
  assert.ok(notBool.startsWith(`${FILE}: ${P}[0].expression: Invalid value: `), notBool);
  // `claims` is not a variable of user rules.
  const [unknownVariable] = errorsOf(r({ expression: "claims.sub == ''" }));
  assert.ok(unknownVariable.startsWith(`${FILE}: ${P}[0].expression: `), unknownVariable);
});

Deno.test("claims.email in the username expression needs claims.email_verified somewhere", () => {
  const e = (patch: Json) => doc([entry(patch)]);
  const byEmail = { username: { expression: "claims.email" } };
  assertErrors(e({ claimMappings: byEmail }), [
    'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": ' +
    "claims.email_verified must be used in claimMappings.username.expression or " +
    "claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when " +
    "claims.email is used in claimMappings.username.expression",
  ]);
  assert.deepEqual(
    errorsOf(e({
      claimMappings: {
        username: { expression: "claims.email_verified ? claims.email : claims.sub" },
      },
    })),
    [],
  );
  assert.deepEqual(
    errorsOf(e({
      claimMappings: byEmail,
      claimValidationRules: [{ expression: "claims.email_verified == true" }],
    })),
    [],
  );
  assert.deepEqual(
    errorsOf(e({
      claimMappings: {
        ...byEmail,
        extra: [{ key: "example.com/verified", valueExpression: "string(claims.email_verified)" }],
      },
    })),
    [],
  );
  // The claim form is checked at authentication time instead (email_verified must be true).
  assert.deepEqual(
    errorsOf(e({ claimMappings: { username: { claim: "email", prefix: "" } } })),
    [],
  );
});

Deno.test("anonymous: enabled, conditions only when enabled, unique paths", () => {
  const a = (anonymous: unknown) => doc([], { anonymous });
  assert.deepEqual(parse(a({ enabled: true })).anonymous, { enabled: true, conditions: [] });
  assert.deepEqual(parse(a({ enabled: false })).anonymous, { enabled: false, conditions: [] });
  assert.deepEqual(
    parse(a({ enabled: true, conditions: [{ path: "/livez" }, { path: "/readyz" }] })).anonymous,
    { enabled: true, conditions: [{ path: "/livez" }, { path: "/readyz" }] },
  );
  const refused = 'anonymous.conditions: Invalid value: [{"path":"/livez"}]: enabled should be ' +
    "set to true when conditions are defined";
  assertErrors(a({ enabled: false, conditions: [{ path: "/livez" }] }), [refused]);
  assertErrors(a({ conditions: [{ path: "/livez" }] }), [refused]);
  assertErrors(a({ enabled: true, conditions: [{ path: "/livez" }, { path: "/livez" }] }), [
    'anonymous.conditions[1].path: Duplicate value: "/livez"',
  ]);
  assertErrors(a({ enabled: true, conditions: [{}] }), [
    "anonymous.conditions[0].path: Required value",
  ]);
  assertErrors(a({ enabled: "yes" }), [
    'anonymous.enabled: Invalid value: "yes": must be a boolean',
  ]);
  assertErrors(a({ enabled: true, paths: [] }), ["anonymous.paths: unknown field"]);
});

Deno.test("a valid config is a plain value with compiled expressions", () => {
  const cfg = parse(doc([entry({
    claimMappings: {
      username: { expression: "claims.sub" },
      extra: [{ key: "example.com/a", valueExpression: "claims.a" }],
    },
  })]));
  const u = cfg.jwt[0].claimMappings.username;
  assert.ok("expression" in u);
  assert.deepEqual(u.expression.expression, "claims.sub");
  assert.deepEqual(u.expression.evaluate({ claims: { sub: "alice" } }), "alice");
});

async function tempDir(): Promise<AsyncDisposable & { path: string }> {
  const path = await Deno.makeTempDir();
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}
