import assert from "node:assert/strict";
import { join } from "node:path";
import {
  credentialsFor,
  readWebhookKubeconfig,
  webhookHostPort,
  type WebhookKubeconfig,
} from "./webhook_credentials.ts";

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-webhook-credentials-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

const CERT = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";

function users(names: string[], current?: string): WebhookKubeconfig {
  return {
    users: new Map(names.map((n) => [n, { token: n }])),
    current: current === undefined ? undefined : { token: current },
  };
}

/** The user whose credentials `hostPort` gets. */
function match(kc: WebhookKubeconfig, hostPort: string): string | undefined {
  return credentialsFor(kc, hostPort)?.token;
}

Deno.test("webhookHostPort: host:port, 443 when the URL has no port", () => {
  assert.equal(webhookHostPort("https://hook.example.com/x"), "hook.example.com:443");
  assert.equal(webhookHostPort("https://hook.example.com:443/x"), "hook.example.com:443");
  assert.equal(webhookHostPort("https://Hook.Example.com:8443"), "hook.example.com:8443");
  assert.equal(webhookHostPort("https://web.ns.svc:9443/validate"), "web.ns.svc:9443");
  assert.equal(webhookHostPort("https://[::1]:8443/"), "[::1]:8443");
});

Deno.test("credentials: kube's matching order, the most specific first", () => {
  const all = users([
    "*",
    "hook.example.com:8443",
    "hook.example.com",
    "*.example.com",
    "*.example.com:8443",
    "*.b.example.com:8443",
  ]);
  assert.equal(match(all, "hook.example.com:8443"), "hook.example.com:8443");
  assert.equal(match(all, "a.b.example.com:8443"), "*.b.example.com:8443");
  assert.equal(match(all, "other.example.com:8443"), "*.example.com:8443");
  // The host without its port, and *.domain without a port, only for port 443.
  assert.equal(match(all, "hook.example.com:443"), "hook.example.com");
  assert.equal(match(all, "x.example.com:443"), "*.example.com");
  assert.equal(match(all, "x.example.com:9443"), "*");
  assert.equal(match(all, "example.org:443"), "*");
  // host:port beats *.domain; *.domain:port beats the host alone.
  const some = users(["hook.example.com", "*.example.com:443"]);
  assert.equal(match(some, "hook.example.com:443"), "*.example.com:443");
  // Without `*`: the current context's user, else none.
  assert.equal(match(users(["a:443"], "current"), "b:443"), "current");
  assert.equal(match(users(["a:443"]), "b:443"), undefined);
  // Service references.
  const svc = users(["*.ns.svc:443", "web.ns.svc:9443"]);
  assert.equal(match(svc, "web.ns.svc:9443"), "web.ns.svc:9443");
  assert.equal(match(svc, "other.ns.svc:443"), "*.ns.svc:443");
  assert.equal(match(svc, "other.ns.svc:9443"), undefined);
});

Deno.test("readWebhookKubeconfig: tokens, certificates, files, the current context", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "tok"), " secret \n");
  await Deno.writeTextFile(join(dir.path, "c.pem"), CERT);
  await Deno.writeTextFile(join(dir.path, "k.pem"), KEY);
  const path = join(dir.path, "kc.yaml");
  await Deno.writeTextFile(
    path,
    [
      "current-context: ctx",
      "contexts:",
      "- name: ctx",
      "  context: {cluster: c, user: files}",
      "users:",
      "- name: inline",
      `  user: {token: t1, client-certificate-data: ${btoa(CERT)}, client-key-data: ${btoa(KEY)}}`,
      "- name: files",
      "  user: {tokenFile: tok, client-certificate: c.pem, client-key: k.pem}",
      "- name: empty",
      "  user: {}",
    ].join("\n"),
  );
  const kc = await readWebhookKubeconfig(path);
  assert.deepEqual(kc.users.get("inline"), { token: "t1", cert: CERT, key: KEY });
  assert.deepEqual(kc.users.get("files"), { token: "secret", cert: CERT, key: KEY });
  assert.deepEqual(kc.users.get("empty"), {});
  assert.deepEqual(kc.current, kc.users.get("files"));

  const refused: [string, string][] = [
    ["users: {}", "users: expected a list"],
    ["users:\n- user: {}", "users[0].name: required"],
    ["users:\n- name: a\n- name: a", 'users[1].name: "a" is given twice'],
    [
      "users:\n- name: a\n  user: {username: u, password: p}",
      "users[0].user.username: is not supported",
    ],
    ["users:\n- name: a\n  user: {exec: {}}", "users[0].user.exec: is not supported"],
    [
      "users:\n- name: a\n  user: {token: t, tokenFile: tok}",
      "users[0].user: give token or tokenFile, not both",
    ],
    [
      "users:\n- name: a\n  user: {client-key: k.pem}",
      "users[0].user.client-certificate: required with client-key",
    ],
    [
      "users:\n- name: a\n  user: {client-certificate: k.pem, client-key: k.pem}",
      "users[0].user.client-certificate: no PEM CERTIFICATE block",
    ],
    [
      "users:\n- name: a\n  user: {client-certificate: c.pem, client-key: c.pem}",
      "users[0].user.client-key: no PEM PRIVATE KEY block",
    ],
    [
      "users:\n- name: a\n  user: {client-certificate-data: '%%', client-key: k.pem}",
      "users[0].user.client-certificate-data: not valid base64",
    ],
    [
      "users:\n- name: a\n  user: {tokenFile: nope}",
      'users[0].user.tokenFile: cannot read "nope": No such file or directory',
    ],
    ["current-context: x", 'current-context: "x" is not the name of an entry of contexts'],
    [
      "current-context: x\ncontexts:\n- name: x\n  context: {user: u}",
      'contexts: the user "u" of "x" is not the name of an entry of users',
    ],
  ];
  for (const [text, message] of refused) {
    await Deno.writeTextFile(path, text);
    await assert.rejects(() => readWebhookKubeconfig(path), new Error(message), text);
  }
});
