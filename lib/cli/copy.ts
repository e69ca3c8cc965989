/**
 * `platform storage copy --from <data-dir|etcd://…> --to <data-dir|etcd://…>`: every object
 * of a stopped server into an empty target. Objects, not history: each is created anew in the
 * target, so resourceVersions change (the command says so). The source is read at one
 * revision. A data-dir target is built in a temporary directory and renamed into place once
 * complete; an etcd target that fails half-way has what was written deleted again.
 *
 * Encryption at rest: with `--encryption-provider-config`, values are decrypted from the
 * source and written through the same configuration (the target encrypts them again, a data
 * dir and etcd alike). Without it, values are copied as they are stored: the target then needs
 * the source's configuration to read them.
 * @module
 */

import {
  ENCRYPTED_PREFIX,
  EncryptionTransformer,
  loadEncryptionConfig,
} from "../encryption/mod.ts";
import {
  DIR_MODE,
  FileStore,
  type KeyValue,
  type Store,
  unreadableReason,
} from "../storage/mod.ts";
import { type CommandFlag, optional, type ParsedFlags, required, UsageError } from "./args.ts";
import {
  type EtcdTlsFiles,
  type Location,
  OBJECTS,
  openSource,
  openTarget,
  parseLocation,
} from "./locations.ts";

/** The flags of `platform storage copy`. */
export const COPY_FLAGS: readonly CommandFlag[] = [
  {
    name: "from",
    kind: "string",
    value: "DIR|etcd://HOST:PORT[,HOST:PORT]/PREFIX",
    help: "Where the objects are: a stopped server's data directory, or an etcd prefix.",
  },
  {
    name: "to",
    kind: "string",
    value: "DIR|etcd://HOST:PORT[,HOST:PORT]/PREFIX",
    help: "Where they go: a data directory without a store, or an empty etcd prefix.",
  },
  {
    name: "etcd-cafile",
    kind: "string",
    value: "FILE",
    help: "CA bundle that verifies etcd (etcd:// is then https).",
  },
  {
    name: "etcd-certfile",
    kind: "string",
    value: "FILE",
    help: "Client certificate presented to etcd (with --etcd-keyfile).",
  },
  { name: "etcd-keyfile", kind: "string", value: "FILE", help: "Key of --etcd-certfile." },
  {
    name: "encryption-provider-config",
    kind: "string",
    value: "FILE",
    help: "The servers' EncryptionConfiguration: values are decrypted from the source and " +
      "encrypted again for the target. Without it they are copied as stored.",
  },
];

/** Concurrent creates in the target: many share one journal fsync (group commit). */
const PARALLEL = 256;

/** Runs the copy; prints what was copied. */
export async function runCopy(flags: ParsedFlags, out: (line: string) => void): Promise<void> {
  const tls: EtcdTlsFiles = {
    caFile: optional(flags, "etcd-cafile"),
    certFile: optional(flags, "etcd-certfile"),
    keyFile: optional(flags, "etcd-keyfile"),
  };
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new UsageError("--etcd-certfile and --etcd-keyfile go together");
  }
  const from = parseLocation(required(flags, "from"), "from", tls);
  const to = parseLocation(required(flags, "to"), "to", tls);
  if (from.kind === "dir" && to.kind === "dir" && from.dataDir === to.dataDir) {
    throw new UsageError("--from and --to are the same data directory");
  }
  const configFile = optional(flags, "encryption-provider-config");
  const transformer = configFile
    ? new EncryptionTransformer(await loadEncryptionConfig(configFile))
    : undefined;
  const logger = { warn: (m: string) => console.error(`platform: ${m}`) };
  const opts = { tls, transformer, logger };

  const source = await openSource(from, opts);
  let items: KeyValue[];
  let revision: number;
  try {
    const list = await source.list(OBJECTS);
    items = list.items;
    revision = list.revision;
  } finally {
    await source.close();
  }
  checkValues(items);

  // A data-dir target is written beside its final place and renamed there when complete.
  const staging = to.kind === "dir" ? await stagingDir(to.dataDir) : "";
  let target: Store | undefined;
  try {
    target = await openTarget(to, `${staging}/store`, opts);
    await createAll(target, items);
    // Every object file written now: close would leave a backlog to the next open (and say so).
    if (target instanceof FileStore) await target.flush();
    await target.close();
    target = undefined;
    if (to.kind === "dir") {
      await Deno.rename(`${staging}/store`, `${to.dataDir}/store`);
      await Deno.remove(staging);
    }
  } catch (err) {
    if (target) await undo(target, items);
    if (staging) await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw err;
  }
  report(out, { from, to, items, revision, decrypted: configFile !== undefined });
}

/** Refuses values that the target could not read. */
function checkValues(items: KeyValue[]): void {
  const unreadable = items.filter((kv) => unreadableReason(kv.value) !== undefined);
  if (unreadable.length > 0) {
    const first = unreadable[0];
    throw new UsageError(
      `--encryption-provider-config: ${unreadable.length} values cannot be read with it ` +
        `(first: ${first.key}: ${unreadableReason(first.value)})`,
    );
  }
}

/** An empty 0700 directory beside `dataDir` (made if missing), for the target's store. */
async function stagingDir(dataDir: string): Promise<string> {
  await Deno.mkdir(dataDir, { recursive: true, mode: DIR_MODE });
  const dir = await Deno.makeTempDir({ dir: dataDir, prefix: ".store-copy-" });
  await Deno.chmod(dir, DIR_MODE);
  return dir;
}

async function createAll(store: Store, items: KeyValue[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const kv = items[next++];
      await store.create(kv.key, kv.value);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
}

/** Deletes what a failed copy created in an etcd target (best effort), then closes it. */
async function undo(store: Store, items: KeyValue[]): Promise<void> {
  for (const kv of items) await store.delete(kv.key).catch(() => {});
  await store.close().catch(() => {});
}

function report(
  out: (line: string) => void,
  r: { from: Location; to: Location; items: KeyValue[]; revision: number; decrypted: boolean },
): void {
  const counts = new Map<string, number>();
  for (const kv of r.items) {
    const [, , group, resource] = kv.key.split("/");
    const name = `${group}/${resource}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  out(
    `copied ${r.items.length} objects from ${r.from.shown} (at revision ${r.revision}) to ` +
      `${r.to.shown}:`,
  );
  const width = Math.max(...[...counts.keys()].map((k) => k.length));
  for (const [name, n] of [...counts].sort()) out(`  ${name.padEnd(width)}  ${n}`);
  out(
    "resourceVersions changed: objects were copied, not their history, so every object has a " +
      "new resourceVersion in the target; clients must list again (watches, continue tokens " +
      "and resourceVersions from before mean nothing there).",
  );
  if (r.from.kind === "dir") {
    out(
      `certificates and tokens are not copied: copy ${r.from.dataDir}/pki to each new data ` +
        "directory to keep the same CA, admin token and service account key.",
    );
  }
  if (!r.decrypted && r.items.some((kv) => kv.value.startsWith(ENCRYPTED_PREFIX))) {
    out(
      "encrypted values were copied as stored: start the target with the same encryption config.",
    );
  }
}
