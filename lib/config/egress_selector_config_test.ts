import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { ensurePki } from "../certificates/pki.ts";
import { silentLogger } from "../api/mod.ts";
import { ConfigError } from "./config_error.ts";
import { loadEgressSelectorConfig } from "./egress_selector_config.ts";

type Json = Record<string, unknown>;

const dir = await Deno.makeTempDir({ prefix: "platform-egress-config-" });
const pki = await ensurePki({
  dataDir: join(dir, "pki"),
  sans: [],
  bindAddress: "127.0.0.1",
  logger: silentLogger,
});
await Deno.writeTextFile(join(dir, "ca.crt"), pki.caCertPem);
await Deno.writeTextFile(join(dir, "client.crt"), pki.servingCertPem);
await Deno.writeTextFile(join(dir, "client.key"), pki.servingKeyPem);
await Deno.writeTextFile(join(dir, "not-a-cert.pem"), "hello\n");
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

let files = 0;
async function load(doc: Json | string) {
  const path = join(dir, `egress-${++files}.yaml`);
  await Deno.writeTextFile(path, typeof doc === "string" ? doc : stringify(doc));
  return await loadEgressSelectorConfig(path);
}

/** The problems the file's load reports, without the file name. */
async function problems(doc: Json | string): Promise<string[]> {
  try {
    await load(doc);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message.split("\n").map((l) => l.replace(/^[^:]*egress-\d+\.yaml: /, ""));
  }
  assert.fail("loaded");
}

function file(...selections: Json[]): Json {
  return {
    apiVersion: "apiserver.platform.io/v1beta1",
    kind: "EgressSelectorConfiguration",
    egressSelections: selections,
  };
}

const tcp = (url: string, tlsConfig?: Json) => ({
  proxyProtocol: "HTTPConnect",
  transport: { tcp: { url, ...(tlsConfig ? { tlsConfig } : {}) } },
});

Deno.test("egress config: the three selections, over tcp, https with TLS files, and uds", async () => {
  const loaded = await load(file(
    { name: "cluster", connection: tcp("http://127.0.0.1:8888") },
    {
      name: "controlplane",
      connection: tcp("https://proxy.example:8443", {
        caBundle: "ca.crt",
        clientCert: "client.crt",
        clientKey: "client.key",
      }),
    },
    {
      name: "etcd",
      connection: { proxyProtocol: "HTTPConnect", transport: { uds: { udsName: "p.sock" } } },
    },
  ));
  assert.deepEqual(loaded.warnings, []);
  assert.deepEqual(loaded.selections.cluster, {
    protocol: "HTTPConnect",
    proxy: { transport: "tcp", url: "http://127.0.0.1:8888" },
  });
  assert.deepEqual(loaded.selections.controlplane, {
    protocol: "HTTPConnect",
    proxy: {
      transport: "tcp",
      url: "https://proxy.example:8443",
      tls: {
        caBundle: pki.caCertPem,
        clientCert: pki.servingCertPem,
        clientKey: pki.servingKeyPem,
      },
    },
  });
  // Relative to the file's directory.
  assert.deepEqual(loaded.selections.etcd, {
    protocol: "HTTPConnect",
    proxy: { transport: "uds", udsName: join(dir, "p.sock") },
  });
});

Deno.test("egress config: kube's spelling; master is controlplane, with a warning; Direct", async () => {
  const loaded = await load({
    ...file({ name: "Master", connection: { proxyProtocol: "Direct" } }),
    apiVersion: "apiserver.k8s.io/v1beta1",
  });
  assert.deepEqual(loaded.selections, { controlplane: { protocol: "Direct" } });
  assert.deepEqual(loaded.warnings, [
    'egressSelections[0].name: "master" is deprecated, use "controlplane" (the selection is used as controlplane)',
  ]);
});

Deno.test("egress config: every problem at once, each with its field path", async () => {
  assert.deepEqual(
    await problems({
      ...file(
        { name: "cluster", connection: { proxyProtocol: "HTTPConnect" } },
        { name: "master", connection: { proxyProtocol: "Direct" } },
        { name: "controlplane", connection: { proxyProtocol: "Direct" } },
        { name: "nodes", connection: { proxyProtocol: "Direct", transport: {} } },
        { name: "etcd", connection: { proxyProtocol: "Magic" }, extra: 1 },
      ),
      apiVersion: "v1",
    }),
    [
      'apiVersion: "v1" is not one of "apiserver.platform.io/v1beta1", "apiserver.k8s.io/v1beta1", "apiserver.k8s.io/v1alpha1"',
      "egressSelections[0].connection.transport: Required value: proxyProtocol HTTPConnect needs a transport (tcp or uds)",
      'egressSelections[2].name: Duplicate value: "controlplane" (egressSelections[1] selects it too)',
      'egressSelections[3].name: Unsupported value: "nodes": supported values: "cluster", "controlplane", "etcd", "master"',
      "egressSelections[3].connection.transport: must be absent with proxyProtocol Direct",
      "egressSelections[4].extra: unknown field",
      'egressSelections[4].connection.proxyProtocol: Unsupported value: "Magic": supported values: "Direct", "HTTPConnect", "GRPC"',
    ],
  );
});

Deno.test("egress config: transports: tcp and uds rules, spec 03's TLS rules", async () => {
  const uds = (udsName: string) => ({
    proxyProtocol: "HTTPConnect",
    transport: { uds: { udsName } },
  });
  assert.deepEqual(
    await problems(file(
      { name: "cluster", connection: tcp("socks5://127.0.0.1:1080") },
      { name: "etcd", connection: uds("unix:///run/proxy.sock") },
      {
        name: "controlplane",
        connection: tcp("https://proxy:8443", { caBundle: "not-a-cert.pem" }),
      },
    )),
    [
      'egressSelections[0].connection.transport.tcp.url: "socks5://127.0.0.1:1080": supported connection protocols are http:// and https://',
      'egressSelections[1].connection.transport.uds.udsName: "unix:///run/proxy.sock": a socket path, without the unix:// prefix',
      "egressSelections[2].connection.transport.tcp.tlsConfig.clientCert: Required value: with an https:// url",
      "egressSelections[2].connection.transport.tcp.tlsConfig.clientKey: Required value: with an https:// url",
      'egressSelections[2].connection.transport.tcp.tlsConfig.caBundle: "not-a-cert.pem" has no valid PEM CERTIFICATE block',
    ],
  );
  assert.deepEqual(
    await problems(file(
      { name: "cluster", connection: tcp("http://p:3128", { clientCert: "client.crt" }) },
      { name: "etcd", connection: tcp("https://p:3129") },
      {
        name: "controlplane",
        connection: {
          proxyProtocol: "HTTPConnect",
          transport: { tcp: { url: "http://p:1" }, uds: { udsName: "/p" } },
        },
      },
    )),
    [
      "egressSelections[0].connection.transport.tcp.tlsConfig.clientCert: must be absent with an http:// url",
      "egressSelections[1].connection.transport.tcp.tlsConfig: Required value: an https:// url needs clientCert and clientKey",
      "egressSelections[2].connection.transport: tcp and uds cannot both be set",
    ],
  );
  const [missing] = await problems(file({
    name: "cluster",
    connection: tcp("https://p:3129", { clientCert: "nope.crt", clientKey: "client.key" }),
  }));
  assert.match(
    missing,
    /^egressSelections\[0\]\.connection\.transport\.tcp\.tlsConfig\.clientCert: /,
  );
  assert.match(missing, /nope\.crt/);
});

Deno.test("egress config: GRPC only over uds, and then refused as this server cannot speak it", async () => {
  assert.deepEqual(
    await problems(file(
      {
        name: "cluster",
        connection: { proxyProtocol: "GRPC", transport: { tcp: { url: "http://p:1" } } },
      },
      {
        name: "etcd",
        connection: { proxyProtocol: "GRPC", transport: { uds: { udsName: "/run/k.sock" } } },
      },
    )),
    [
      "egressSelections[0].connection.transport.tcp: the GRPC protocol is not supported over tcp: use uds",
      'egressSelections[1].connection.proxyProtocol: "GRPC" is not supported by this server (it does not speak konnectivity\'s gRPC tunnel); use HTTPConnect over the same uds (konnectivity-server --mode=http-connect)',
    ],
  );
});

Deno.test("egress config: an empty or unreadable file, a list that is not one", async () => {
  assert.match((await problems(""))[0], /the file is empty; expected apiVersion/);
  assert.deepEqual(await problems({ ...file(), egressSelections: "cluster" }), [
    'egressSelections: expected a list, got "cluster"',
  ]);
  await assert.rejects(
    loadEgressSelectorConfig(join(dir, "absent.yaml")),
    /^ConfigError: --egress-selector-config-file: cannot read ".*absent\.yaml": /,
  );
});
