// deno-lint-ignore-file no-explicit-any
/**
 * The AllowUnsafeMalformedObjectDeletion gate (alpha, KEP-3926), against a real server on the
 * file store: a Secret encrypted with a key the server no longer has cannot be read, and only
 * the unsafe delete (`ignoreStoreReadErrorWithClusterBreakingPotential`, with the extra verb
 * `unsafe-delete-ignore-read-errors`) removes it, finalizers notwithstanding.
 */

import { assert, assertEquals } from "./assert.ts";
import { createAsAdmin, type TestServer, testServer } from "./harness.ts";
import { openWatch } from "./watch_client.ts";

const KEY_A = btoa("0123456789abcdef0123456789abcdef");
const KEY_B = btoa("fedcba9876543210fedcba9876543210");
const SECRETS = "/api/v1/namespaces/default/secrets";
const OPTION = "ignoreStoreReadErrorWithClusterBreakingPotential";
const GATE = "AllowUnsafeMalformedObjectDeletion";

async function encryptionConfig(path: string, keyName: string, secret: string): Promise<string> {
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "EncryptionConfiguration",
      resources: [{
        resources: ["secrets"],
        providers: [{ aesgcm: { keys: [{ name: keyName, secret }] } }, { identity: {} }],
      }],
    }),
  );
  return path;
}

function start(
  dir: string,
  config: string,
  gate: boolean,
  audit?: { policyFile: string; logPath: string },
): Promise<TestServer> {
  return testServer({
    dataDir: `${dir}/data`,
    storage: "file",
    encryptionProviderConfigFile: config,
    featureGates: new Map([[GATE, gate]]),
    ...(audit ? { audit } : {}),
  });
}

/** A data directory holding Secret "corrupt" (with a finalizer) encrypted under key A, which
 * the returned configuration (key B only) cannot read. */
async function corruptSecretSetup(): Promise<{ dir: string; withoutA: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "platform-unsafe-delete-" });
  const withA = await encryptionConfig(`${dir}/a.json`, "key1", KEY_A);
  const withoutA = await encryptionConfig(`${dir}/b.json`, "key2", KEY_B);
  {
    await using ts = await start(dir, withA, false);
    await createAsAdmin(ts, SECRETS, {
      metadata: { name: "corrupt", finalizers: ["example.com/hold"] },
      data: { v: btoa("lost") },
    });
  }
  return { dir, withoutA, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

const UNREADABLE_REASON =
  'no configured provider key can decrypt the value (stored with "k8s:enc:aesgcm:v1:key1:")';

Deno.test("unsafe delete: with the gate off the option is ignored and a corrupt object cannot be deleted", async () => {
  await using setup = await corruptSecretSetup();
  await using ts = await start(setup.dir, setup.withoutA, false);
  const got = await ts.json("GET", `${SECRETS}/corrupt`);
  assertEquals(got.status, 500);
  assertEquals(
    got.body.message,
    'Internal error occurred: unable to transform key "/registry/core/secrets/default/corrupt": ' +
      UNREADABLE_REASON,
  );
  // As kube: the option is dropped while the gate is off, so this is an ordinary delete.
  for (
    const req of [
      { path: `${SECRETS}/corrupt?${OPTION}=true` },
      { path: `${SECRETS}/corrupt`, body: { kind: "DeleteOptions", [OPTION]: true } },
    ]
  ) {
    const del = await ts.json("DELETE", req.path, { body: req.body });
    assertEquals(del.status, 500, JSON.stringify(del.body));
    assertEquals(del.body.reason, "InternalError");
  }
  // The option on a healthy object is ignored too: it is deleted as usual.
  await createAsAdmin(ts, SECRETS, { metadata: { name: "fine" } });
  assertEquals((await ts.json("DELETE", `${SECRETS}/fine?${OPTION}=true`)).status, 200);
  assertEquals((await ts.json("GET", `${SECRETS}/corrupt`)).status, 500);
  // A list stops at the first unreadable object, as before.
  const list = await ts.json("GET", SECRETS);
  assertEquals(list.status, 500);
  assertEquals(list.body.reason, "InternalError");
  assert(list.body.message.includes("unable to transform key"), list.body.message);
});

Deno.test("unsafe delete: with the gate on, the verb unsafe-delete-ignore-read-errors removes a corrupt object", async () => {
  await using setup = await corruptSecretSetup();
  await using ts = await start(setup.dir, setup.withoutA, true);

  // Reads name the object as kube's corrupt-object storage error.
  const got = await ts.json("GET", `${SECRETS}/corrupt`);
  assertEquals(got.status, 500);
  assertEquals(got.body.reason, "InternalError");
  assertEquals(
    got.body.message,
    "Internal error occurred: StorageError: corrupt object, Code: 7, " +
      "Key: /registry/core/secrets/default/corrupt, ResourceVersion: 0, AdditionalErrorMsg: " +
      `data from the storage is not transformable revision=0: ${UNREADABLE_REASON}`,
  );
  // An ordinary delete still needs to read it.
  assertEquals((await ts.json("DELETE", `${SECRETS}/corrupt`)).status, 500);

  // A user allowed get and delete on secrets, but not the unsafe verb.
  await createAsAdmin(ts, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
    metadata: { name: "secrets" },
    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "delete"] }],
  });
  await createAsAdmin(ts, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
    metadata: { name: "croc" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "secrets" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "croc" }],
  });
  const asCroc = { "Impersonate-User": "croc" };
  const denied = await ts.json("DELETE", `${SECRETS}/corrupt?${OPTION}=true`, {
    headers: asCroc,
  });
  assertEquals(denied.status, 403, JSON.stringify(denied.body));
  assertEquals(denied.body.reason, "Forbidden");
  assert(
    denied.body.message.startsWith(
      'secrets "corrupt" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", ' +
        "reason: ",
    ),
    denied.body.message,
  );
  assertEquals(denied.body.details, { name: "corrupt", kind: "secrets" });

  // A collection delete does not take the option.
  const collection = await ts.json("DELETE", `${SECRETS}?${OPTION}=true`);
  assertEquals(collection.status, 422, JSON.stringify(collection.body));
  assertEquals(
    collection.body.message,
    `DeleteOptions.meta.platform.io "" is invalid: ${OPTION}: Invalid value: true: ` +
      "is not allowed with DELETECOLLECTION, try again after removing the option",
  );

  // A watch open across the delete sees it end with kube's StorageReadError.
  // A list names every object it cannot read (kube's StorageReadError).
  await createAsAdmin(ts, SECRETS, { metadata: { name: "readable" } });
  const list = await ts.json("GET", SECRETS);
  assertEquals(list.status, 500, JSON.stringify(list.body));
  assertEquals(list.body.reason, "StorageReadError");
  assertEquals(list.body.message, "failed to read one or more secrets from the storage");
  assertEquals(list.body.details.kind, "secrets");
  assertEquals(list.body.details.name, "/registry/core/secrets/default/");
  assertEquals(list.body.details.causes.length, 1);
  assertEquals(list.body.details.causes[0].reason, "UnexpectedServerResponse");
  assertEquals(list.body.details.causes[0].field, "/registry/core/secrets/default/corrupt");
  assertEquals((await ts.json("DELETE", `${SECRETS}/readable`)).status, 200);
  const rv = (await ts.json("GET", "/api/v1/namespaces/default/configmaps")).body.metadata
    .resourceVersion;
  await using watch = await openWatch(ts, `${SECRETS}?watch=true&resourceVersion=${rv}`);
  assertEquals(watch.status, 200);

  // A dry run checks and removes nothing.
  const dry = await ts.json("DELETE", `${SECRETS}/corrupt?${OPTION}=true&dryRun=All`);
  assertEquals(dry.status, 200, JSON.stringify(dry.body));
  assertEquals((await ts.json("GET", `${SECRETS}/corrupt`)).status, 500);

  // The admin (system:masters) may: the object goes, its finalizer notwithstanding.
  const del = await ts.json("DELETE", `${SECRETS}/corrupt`, {
    body: { apiVersion: "v1", kind: "DeleteOptions", [OPTION]: true },
  });
  assertEquals(del.status, 200, JSON.stringify(del.body));
  assertEquals(del.body, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    code: 200,
    details: { name: "corrupt", kind: "Secret" },
  });
  const ev = await watch.next(30_000);
  assertEquals(ev.type, "ERROR");
  assertEquals(ev.object.code, 500);
  assertEquals(ev.object.reason, "StorageReadError");
  assert(
    ev.object.message.startsWith("saw a DELETED event, but object data is corrupt - "),
    ev.object.message,
  );
  assert(await watch.ended(30_000), "the watch ends after the error");
  assertEquals((await ts.json("GET", `${SECRETS}/corrupt`)).status, 404);
  const after = await ts.json("GET", SECRETS);
  assertEquals(after.status, 200);
  assertEquals(after.body.items.map((s: any) => s.metadata.name), []);

  // The option on an object that reads fine: kube's refusal; the object stays.
  await createAsAdmin(ts, SECRETS, { metadata: { name: "fine" } });
  const healthy = await ts.json("DELETE", `${SECRETS}/fine?${OPTION}=true`);
  assertEquals(healthy.status, 422, JSON.stringify(healthy.body));
  assertEquals(
    healthy.body.message,
    `secrets "fine" is invalid: ${OPTION}: Invalid value: true: is exclusively used to ` +
      "delete corrupt object(s), try again by removing this option",
  );
  assertEquals(healthy.body.details.kind, "secrets");
  assertEquals((await ts.json("GET", `${SECRETS}/fine`)).status, 200);
  // A missing object: 404 as for any delete.
  assertEquals((await ts.json("DELETE", `${SECRETS}/nothing?${OPTION}=true`)).status, 404);
});

Deno.test("unsafe delete: the audit event carries kube's annotation", async () => {
  await using setup = await corruptSecretSetup();
  const policyFile = `${setup.dir}/policy.yaml`;
  const logPath = `${setup.dir}/audit.log`;
  await Deno.writeTextFile(
    policyFile,
    "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n",
  );
  let auditID: string | null = null;
  {
    await using ts = await start(setup.dir, setup.withoutA, true, { policyFile, logPath });
    const res = await ts.request("DELETE", `${SECRETS}/corrupt?${OPTION}=true`);
    assertEquals(res.status, 200, await res.text());
    auditID = res.headers.get("Audit-ID");
  }
  assert(auditID, "the answer has an Audit-ID header");
  const events = (await Deno.readTextFile(logPath)).split("\n").filter((l) => l)
    .map((l) => JSON.parse(l)).filter((e: any) => e.auditID === auditID);
  const done = events.find((e: any) => e.stage === "ResponseComplete");
  assert(done, JSON.stringify(events));
  assertEquals(done.verb, "delete");
  assertEquals(done.annotations["apiserver.k8s.io/unsafe-delete-ignore-read-error"], "");
});
