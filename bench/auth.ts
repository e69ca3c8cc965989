/**
 * Access-control figures for `deno task bench` (see bench/README.md):
 *
 * - GETs/s of one configmap by a user whom RBAC allows (a RoleBinding to `view`, among 500
 *   other bindings), next to the same GETs on a server whose authorization configuration is
 *   `AlwaysAllow` (the baseline), measured alternately in the same run. The user is not in
 *   system:masters, so RBAC really evaluates rules.
 * - The cost of a JWT per request with warm keys: GETs/s with a JWT from an OIDC issuer
 *   (started here) against GETs/s with a static token, on the RBAC server; and the
 *   authenticator alone, in process (µs per verification).
 */

import { ensurePki } from "../lib/certificates/pki.ts";
import { JwtAuthenticator } from "../lib/auth/jwt.ts";
import { parseAuthenticationConfig } from "../lib/auth/authentication_config.ts";
import { tokenAuthenticator } from "../lib/auth/authenticator.ts";
import { Issuer, now, sign, signingKey } from "../lib/auth/oidc_issuer_testdata.ts";
import type { Api } from "./harness.ts";
import type { WrkRequest } from "./wrk.ts";

export interface AuthServer {
  api: Api;
  stop(): Promise<void>;
  /** The server's process id (for its CPU time). */
  pid?: number;
}

export interface AuthOptions {
  /** A scratch directory. */
  dir: string;
  /** Starts `platform serve` with these extra flags; `api` carries the admin token. */
  start(dataDir: string, flags: string[]): Promise<AuthServer>;
  measure(
    api: Api,
    concurrency: number,
    ms: number,
    req: WrkRequest & { expected: number },
  ): Promise<{
    perSec: number;
    errors: number;
    firstError?: string;
    p50?: number;
    p99?: number;
    /** Requests answered over warm-up and measurement: what the server's CPU time over the
     * call was spent on. */
    served?: number;
  }>;
  ms: number;
  note: (msg: string) => void;
}

export interface AuthFigures {
  /** GETs/s with RBAC deciding, and with AlwaysAllow (medians of alternating runs). */
  rbacPerSec: number;
  allowPerSec: number;
  /** GETs/s on the RBAC server with a JWT, and with a static token. */
  jwtPerSec: number;
  staticPerSec: number;
  /** In-process µs per authentication: JWT with warm keys, static token. */
  jwtMicros: number;
  staticMicros: number;
  problems: string[];
}

const CONNECTIONS = 32;
const ROUNDS = 3;
const FILLER_BINDINGS = 500;
const CM = "/api/v1/namespaces/default/configmaps/bench-auth";

export async function authFigures(o: AuthOptions): Promise<AuthFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  const pki = await ensurePki({
    dataDir: `${o.dir}/issuer`,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  await using issuer = new Issuer(pki);
  const key = await signingKey("ES256", "bench");
  issuer.keys = [key];
  const jwt = await sign(key, {
    iss: issuer.url,
    aud: ["bench"],
    sub: "bench-jwt",
    exp: now() + 3600,
    iat: now(),
  });
  const authnText = [
    "apiVersion: apiserver.platform.io/v1beta1",
    "kind: AuthenticationConfiguration",
    "jwt:",
    "  - issuer:",
    `      url: ${issuer.url}`,
    "      audiences: [bench]",
    "      certificateAuthority: |",
    ...pki.caCertPem.trim().split("\n").map((l) => `        ${l}`),
    "    claimMappings:",
    "      username: {claim: sub, prefix: 'oidc:'}",
    "",
  ].join("\n");
  await Deno.writeTextFile(`${o.dir}/authn.yaml`, authnText);
  await Deno.writeTextFile(
    `${o.dir}/allow.yaml`,
    "apiVersion: apiserver.platform.io/v1beta1\nkind: AuthorizationConfiguration\n" +
      "authorizers:\n  - {type: AlwaysAllow, name: allow}\n",
  );
  await Deno.writeTextFile(`${o.dir}/tokens.csv`, 'bench-token,bench,bench,""\n');
  const tokens = ["--token-auth-file", `${o.dir}/tokens.csv`];

  const rbac = await o.start(`${o.dir}/rbac`, [
    ...tokens,
    "--authentication-config",
    `${o.dir}/authn.yaml`,
  ]);
  const allow = await o.start(`${o.dir}/allow`, [
    ...tokens,
    "--authorization-config",
    `${o.dir}/allow.yaml`,
  ]);
  try {
    for (const s of [rbac, allow]) {
      await admin(s.api, "POST", "/api/v1/namespaces/default/configmaps", {
        metadata: { name: "bench-auth" },
        data: { a: "b" },
      });
    }
    await bindings(rbac.api);
    const as = (s: AuthServer, token: string): Api => ({
      ...s.api,
      headers: { Authorization: `Bearer ${token}` },
    });
    const get = { method: "GET" as const, paths: [CM], headers: {}, expected: 200 };
    const run = async (label: string, api: Api) => {
      const r = await o.measure(api, CONNECTIONS, o.ms, get);
      o.note(`${label}: ${Math.round(r.perSec)}/s`);
      if (r.errors) problems.push(`${label}: ${r.errors} errors, first: ${r.firstError}`);
      return r.perSec;
    };
    const rbacRuns: number[] = [];
    const allowRuns: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      allowRuns.push(await run("GET, AlwaysAllow", as(allow, "bench-token")));
      rbacRuns.push(await run("GET, RBAC", as(rbac, "bench-token")));
    }
    const jwtRuns: number[] = [];
    const staticRuns: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      staticRuns.push(await run("GET, RBAC, static token", as(rbac, "bench-token")));
      jwtRuns.push(await run("GET, RBAC, JWT", as(rbac, jwt)));
    }
    const micro = await authenticatorMicros(authnText, jwt);
    return {
      rbacPerSec: median(rbacRuns),
      allowPerSec: median(allowRuns),
      jwtPerSec: median(jwtRuns),
      staticPerSec: median(staticRuns),
      ...micro,
      problems,
    };
  } finally {
    await rbac.stop();
    await allow.stop();
  }
}

/** The bench users' RoleBinding to `view`, among other users' bindings. */
async function bindings(api: Api): Promise<void> {
  const binding = (name: string, user: string) => ({
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.platform.io", kind: "ClusterRole", name: "view" },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.platform.io", name: user }],
  });
  const path = "/apis/rbac.authorization.platform.io/v1/namespaces/default/rolebindings";
  for (let i = 0; i < FILLER_BINDINGS; i++) {
    await admin(api, "POST", path, binding(`other-${i}`, `user-${i}`));
  }
  await admin(api, "POST", path, binding("bench", "bench"));
  await admin(api, "POST", path, binding("bench-jwt", "oidc:bench-jwt"));
}

async function admin(api: Api, method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(api.url + path, {
    method,
    client: api.client,
    headers: { ...api.headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

/** µs per authentication in process, warm: the JWT authenticator and the static tokens. */
async function authenticatorMicros(
  authnText: string,
  jwt: string,
): Promise<{ jwtMicros: number; staticMicros: number }> {
  const config = parseAuthenticationConfig(authnText, "authn.yaml", {});
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  const authenticator = new JwtAuthenticator(config.jwt[0], { logger });
  try {
    const jwtReq = new Request("https://x/", { headers: { Authorization: `Bearer ${jwt}` } });
    if (!(await authenticator.authenticate(jwtReq))) throw new Error("the bench JWT was refused");
    const statics = tokenAuthenticator(
      new Map([["bench-token", { username: "bench", groups: [] }]]),
    );
    const staticReq = new Request("https://x/", {
      headers: { Authorization: "Bearer bench-token" },
    });
    const time = async (n: number, fn: () => unknown) => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await fn();
      return ((performance.now() - t0) * 1000) / n;
    };
    await time(200, () => authenticator.authenticate(jwtReq));
    return {
      jwtMicros: await time(2000, () => authenticator.authenticate(jwtReq)),
      staticMicros: await time(20000, () => statics.authenticate(staticReq)),
    };
  } finally {
    authenticator.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
