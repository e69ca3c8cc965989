/** The files the server configuration names: data dir, TLS files, client CA, signing CAs. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { clusterSigningFiles } from "./server_config_fields.ts";
import { ensurePki } from "../certificates/pki.ts";
import { errorOf, load, tempDir, TESTDATA, writeConfig } from "./server_config_testdata.ts";

Deno.test("data dir must be a directory when it exists", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "file"), "");
  assert.equal(
    await errorOf(["--data-dir", "file"], dir.path),
    '--data-dir: "file" is not a directory',
  );
});

Deno.test("TLS files are checked with the flag or field that named them", async () => {
  await using dir = await tempDir();
  const pki = await ensurePki({
    dataDir: join(dir.path, "other"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  await Deno.writeTextFile(join(dir.path, "good.crt"), pki.servingCertPem);
  await Deno.writeTextFile(join(dir.path, "good.key"), pki.servingKeyPem);
  await Deno.writeTextFile(join(dir.path, "x.pem"), "hello\n");

  const ok = await load(["--tls-cert-file=good.crt", "--tls-private-key-file=good.key"], dir.path);
  assert.equal(ok.tlsCertFile, join(dir.path, "good.crt"));
  assert.equal(ok.tlsPrivateKeyFile, join(dir.path, "good.key"));

  assert.equal(
    await errorOf(["--tls-cert-file=x.pem", "--tls-private-key-file=good.key"], dir.path),
    '--tls-cert-file: "x.pem" has no valid PEM CERTIFICATE block',
  );
  assert.equal(
    await errorOf(["--tls-private-key-file=good.key"], dir.path),
    "--tls-private-key-file: --tls-cert-file must be given too",
  );
  await writeConfig(dir.path, "c.yaml", "tlsCertFile: x.pem\ntlsPrivateKeyFile: good.key\n");
  assert.equal(
    await errorOf(["--config", "c.yaml"], dir.path),
    'c.yaml: tlsCertFile: "x.pem" has no valid PEM CERTIFICATE block',
  );
  // A flag replacing the bad file value fixes it.
  const fixed = await load(["--config", "c.yaml", "--tls-cert-file", "good.crt"], dir.path);
  assert.equal(fixed.tlsCertFile, join(dir.path, "good.crt"));
  await writeConfig(dir.path, "c.yaml", "tlsCertFile: good.crt\ntlsPrivateKeyFile: x.pem\n");
  assert.match(
    await errorOf(["--config", "c.yaml"], dir.path),
    /^c\.yaml: tlsPrivateKeyFile: "x\.pem" has no valid PEM PRIVATE KEY block/,
  );
});

Deno.test("the client CA file must hold certificates, or be the cluster CA to be", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "x.pem"), "hello\n");
  await Deno.copyFile(join(TESTDATA, "signing-ca.crt"), join(dir.path, "ca.crt"));
  const ok = await load(["--client-ca-file", "ca.crt"], dir.path);
  assert.equal(ok.clientCAFile, join(dir.path, "ca.crt"));
  // The cluster CA does not exist before the first start; naming it is fine.
  const cluster = await load(["--client-ca-file", "data/pki/ca.crt"], dir.path);
  assert.equal(cluster.clientCAFile, join(dir.path, "data", "pki", "ca.crt"));
  assert.equal(
    await errorOf(["--client-ca-file", "none.crt"], dir.path),
    '--client-ca-file: cannot read "none.crt": No such file or directory',
  );
  assert.equal(
    await errorOf(["--client-ca-file=x.pem"], dir.path),
    '--client-ca-file: "x.pem" has no valid PEM CERTIFICATE block',
  );
  await writeConfig(dir.path, "c.yaml", "clientCAFile: x.pem\n");
  assert.equal(
    await errorOf(["--config", "c.yaml"], dir.path),
    'c.yaml: clientCAFile: "x.pem" has no valid PEM CERTIFICATE block',
  );
});

Deno.test("signing CA files: pairs, one CA or one per signer, checked keys", async () => {
  await using dir = await tempDir();
  for (const name of ["signing-ca.crt", "signing-ca.key"]) {
    await Deno.copyFile(join(TESTDATA, name), join(dir.path, name));
  }
  const pki = await ensurePki({
    dataDir: join(dir.path, "other"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  await Deno.writeTextFile(join(dir.path, "other.key"), pki.caKeyPem);
  const all = [
    "--cluster-signing-cert-file=signing-ca.crt",
    "--cluster-signing-key-file",
    "signing-ca.key",
  ];
  const one = await load(all, dir.path);
  assert.deepEqual(clusterSigningFiles(one), {
    clusterSigning: {
      certFile: join(dir.path, "signing-ca.crt"),
      keyFile: join(dir.path, "signing-ca.key"),
    },
  });
  const perSigner = await load([
    "--cluster-signing-nodeagent-serving-cert-file=signing-ca.crt",
    "--cluster-signing-nodeagent-serving-key-file=signing-ca.key",
    "--cluster-signing-apiserver-client-cert-file=other/pki/ca.crt",
    "--cluster-signing-apiserver-client-key-file=other.key",
  ], dir.path);
  assert.deepEqual(clusterSigningFiles(perSigner), {
    clusterSigningPerSigner: {
      "platform.io/nodeagent-serving": {
        certFile: join(dir.path, "signing-ca.crt"),
        keyFile: join(dir.path, "signing-ca.key"),
      },
      "platform.io/apiserver-client": {
        certFile: join(dir.path, "other", "pki", "ca.crt"),
        keyFile: join(dir.path, "other.key"),
      },
    },
  });
  assert.deepEqual(clusterSigningFiles(await load([], dir.path)), {});

  const cases: [string[], string][] = [
    [
      ["--cluster-signing-cert-file=signing-ca.crt"],
      "--cluster-signing-cert-file: --cluster-signing-key-file must be given too",
    ],
    [
      ["--cluster-signing-apiserver-client-nodeagent-key-file=signing-ca.key"],
      "--cluster-signing-apiserver-client-nodeagent-key-file: " +
      "--cluster-signing-apiserver-client-nodeagent-cert-file must be given too",
    ],
    [
      [...all, "--cluster-signing-apiserver-client-cert-file=signing-ca.crt"],
      "--cluster-signing-apiserver-client-cert-file: cannot be combined with " +
      "--cluster-signing-cert-file and --cluster-signing-key-file " +
      "(give one CA for every signer, or one per signer)",
    ],
    [
      ["--cluster-signing-cert-file=signing-ca.crt", "--cluster-signing-key-file=other.key"],
      '--cluster-signing-key-file: "other.key" does not match the certificate in "signing-ca.crt"',
    ],
    [
      [
        "--cluster-signing-nodeagent-serving-cert-file=none.crt",
        "--cluster-signing-nodeagent-serving-key-file=signing-ca.key",
      ],
      '--cluster-signing-nodeagent-serving-cert-file: cannot read "none.crt": ' +
      "No such file or directory",
    ],
  ];
  for (const [argv, message] of cases) {
    assert.equal(await errorOf(argv, dir.path), message, argv.join(" "));
  }
  await writeConfig(
    dir.path,
    "c.yaml",
    "clusterSigningCertFile: signing-ca.crt\nclusterSigningKeyFile: signing-ca.key\n" +
      "clusterSigningApiserverClientKeyFile: signing-ca.key\n" +
      "clusterSigningApiserverClientCertFile: signing-ca.crt\n",
  );
  assert.equal(
    await errorOf(["--config", "c.yaml"], dir.path),
    "c.yaml: clusterSigningApiserverClientCertFile: cannot be combined with " +
      "clusterSigningCertFile and clusterSigningKeyFile " +
      "(give one CA for every signer, or one per signer)",
  );
  // A flag naming the other: each is named where it came from.
  await writeConfig(dir.path, "c.yaml", "clusterSigningNodeagentServingCertFile: signing-ca.crt\n");
  assert.equal(
    await errorOf(["--config", "c.yaml", ...all], dir.path),
    "c.yaml: clusterSigningNodeagentServingCertFile: cannot be combined with " +
      "--cluster-signing-cert-file and --cluster-signing-key-file " +
      "(give one CA for every signer, or one per signer)",
  );
});
