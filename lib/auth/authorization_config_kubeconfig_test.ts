/** The kubeconfig an authorization webhook names: contexts, servers, credentials, files. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { loadAuthorizationConfig } from "./authorization_config.ts";
import {
  config,
  type Doc,
  errors,
  KUBECONFIG,
  makeCa,
  setup,
  webhook,
} from "./authorization_config_testdata.ts";

// ---------------------------------------------------------------------------------------
// The kubeconfig a webhook names

Deno.test("kubeconfig: context selection, server and credentials are checked", async () => {
  const at = "authz.yaml: authorizers[0].webhook.connectionInfo.kubeConfigFile";
  const kubeconfigErrors = async (kubeconfig: Doc | string) => {
    const lines = await errors(config([webhook()]), { kubeconfig });
    assert.equal(lines.length, 1);
    const m = lines[0].match(/^([^"]*)"[^"]*\/webhook\.kubeconfig": (.*)$/);
    assert.ok(m, lines[0]);
    assert.equal(m[1], `${at}: `);
    return m[2];
  };
  const withCluster = (cluster: Doc) => ({
    ...KUBECONFIG,
    clusters: [{ name: "authz", cluster }],
  });
  const withUser = (user: Doc) => ({ ...KUBECONFIG, users: [{ name: "apiserver", user }] });

  assert.equal(await kubeconfigErrors("a: [\n"), "invalid YAML at line 2, column 1");
  assert.equal(
    await kubeconfigErrors({ ...KUBECONFIG, "current-context": "other" }),
    'current-context: "other" is not the name of an entry of contexts',
  );
  assert.equal(
    await kubeconfigErrors({ ...KUBECONFIG, "current-context": undefined, contexts: [] }),
    "current-context: required when there is not exactly one context",
  );
  assert.equal(
    await kubeconfigErrors({ ...KUBECONFIG, clusters: [] }),
    'contexts[0].context.cluster: "authz" is not the name of an entry of clusters',
  );
  assert.equal(
    await kubeconfigErrors(withCluster({})),
    "clusters[0].cluster.server: required field is missing",
  );
  assert.equal(
    await kubeconfigErrors(withCluster({ server: "ftp://x" })),
    'clusters[0].cluster.server: "ftp://x" must be an https or http URL',
  );
  assert.equal(
    await kubeconfigErrors(withCluster({ server: "https://a:b@x" })),
    "clusters[0].cluster.server: must not carry credentials",
  );
  assert.equal(
    await kubeconfigErrors(withCluster({ server: "https://x", "insecure-skip-tls-verify": true })),
    "clusters[0].cluster.insecure-skip-tls-verify: is not supported; give the webhook's CA",
  );
  assert.equal(
    await kubeconfigErrors(
      withCluster({ server: "https://x", "certificate-authority-data": "%%" }),
    ),
    "clusters[0].cluster.certificate-authority-data: is not valid base64",
  );
  assert.equal(
    await kubeconfigErrors(
      withCluster({ server: "https://x", "certificate-authority-data": btoa("not a cert") }),
    ),
    "clusters[0].cluster.certificate-authority-data: has no PEM CERTIFICATE block",
  );
  assert.equal(
    await kubeconfigErrors(withCluster({ server: "https://x", "certificate-authority": "ca.pem" })),
    'clusters[0].cluster.certificate-authority: cannot read "ca.pem": No such file or directory',
  );
  assert.equal(
    await kubeconfigErrors(withUser({ "client-certificate": "c.pem" })),
    'users[0].user.client-certificate: cannot read "c.pem": No such file or directory',
  );
  assert.equal(
    await kubeconfigErrors(withUser({ "client-key-data": btoa("x") })),
    "users[0].user: client-key needs client-certificate",
  );
  assert.equal(
    await kubeconfigErrors(withUser({ exec: { command: "get-token" } })),
    "users[0].user.exec: is not supported",
  );
  assert.equal(
    await kubeconfigErrors(withUser({ token: "t", username: "u", password: "p" })),
    "users[0].user: give a token or a username and password, not both",
  );
});

Deno.test("kubeconfig: files resolve against its directory; token files and passwords", async () => {
  await using tmp = await setup(config([webhook()]));
  const caPem = await makeCa(tmp.dir);
  await Deno.mkdir(join(tmp.dir, "creds"));
  await Deno.writeTextFile(join(tmp.dir, "creds", "ca.pem"), caPem);
  await Deno.writeTextFile(join(tmp.dir, "creds", "token"), "from-file\n");
  const write = (user: Doc) =>
    Deno.writeTextFile(
      join(tmp.dir, "webhook.kubeconfig"),
      stringify({
        ...KUBECONFIG,
        clusters: [{
          name: "authz",
          cluster: { server: "127.0.0.1:9443", "certificate-authority": "creds/ca.pem" },
        }],
        users: [{ name: "apiserver", user }],
      }),
    );
  const connection = async () => {
    const cfg = await loadAuthorizationConfig("authz.yaml", { cwd: tmp.dir });
    assert.ok(cfg.authorizers[0].type === "Webhook");
    return cfg.authorizers[0].webhook.connection;
  };

  await write({ tokenFile: "creds/token" });
  const byFile = await connection();
  assert.equal(byFile.url, "https://127.0.0.1:9443/");
  assert.deepStrictEqual(byFile.caCerts, [caPem]);
  assert.equal(await byFile.authorization?.(), "Bearer from-file");

  await write({ username: "api", password: "pässword" });
  const basic = await connection();
  const encoded = btoa(String.fromCharCode(...new TextEncoder().encode("api:pässword")));
  assert.equal(await basic.authorization?.(), `Basic ${encoded}`);

  await write({});
  assert.equal((await connection()).authorization, undefined);
});

Deno.test("kubeconfig: errors never show credentials", async () => {
  const lines = await errors(config([webhook()]), {
    kubeconfig: {
      ...KUBECONFIG,
      users: [{ name: "apiserver", user: { token: "s3cret", exec: {} } }],
    },
  });
  assert.ok(lines.every((l) => !l.includes("s3cret")));
});
