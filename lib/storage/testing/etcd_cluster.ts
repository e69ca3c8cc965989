/**
 * A real etcd cluster of several members on loopback ports, for fault tests: each member can
 * be killed (SIGKILL) and restarted with its data, on the same ports. Disposing the cluster
 * stops every member and removes their directories.
 */

import { type EtcdProcess, freePort, spawnEtcd, tempBase } from "./etcd_member.ts";

/** One member of an {@link EtcdCluster}. */
export interface ClusterMember {
  name: string;
  clientUrl: string;
  /** Whether it runs (not killed, or restarted since). */
  readonly running: boolean;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again with its data (after {@link kill}); resolves once it answers. */
  restart(): Promise<void>;
}

export interface EtcdCluster extends AsyncDisposable {
  members: ClusterMember[];
  /** Every member's client URL. */
  endpoints: string[];
  stop(): Promise<void>;
}

/** Starts `size` members as one new cluster and waits until each answers. */
export async function startEtcdCluster(
  size = 3,
  opts: { readyTimeoutMs?: number } = {},
): Promise<EtcdCluster> {
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const dir = await Deno.makeTempDir({ dir: await tempBase(), prefix: "etcd-cluster-" });
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `m${i}`,
    clientUrl: `http://127.0.0.1:${freePort()}`,
    peerUrl: `http://127.0.0.1:${freePort()}`,
  }));
  const initialCluster = specs.map((s) => `${s.name}=${s.peerUrl}`).join(",");
  const argsOf = (s: typeof specs[number]) => [
    `--name=${s.name}`,
    `--data-dir=${dir}/${s.name}`,
    `--listen-client-urls=${s.clientUrl}`,
    `--advertise-client-urls=${s.clientUrl}`,
    `--listen-peer-urls=${s.peerUrl}`,
    `--initial-advertise-peer-urls=${s.peerUrl}`,
    `--initial-cluster=${initialCluster}`,
    "--initial-cluster-state=new",
    `--initial-cluster-token=${dir}`,
    "--log-level=warn",
  ];
  const procs: (EtcdProcess | undefined)[] = [];
  const stop = async () => {
    await Promise.all(procs.map((p) => p?.stop("SIGTERM")));
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    // Members answer once a quorum is up: start them together.
    const started = await Promise.all(
      specs.map((s) => spawnEtcd(argsOf(s), s.clientUrl, readyTimeoutMs)),
    );
    procs.push(...started);
  } catch (err) {
    await stop();
    throw err;
  }
  const members = specs.map((s, i): ClusterMember => ({
    name: s.name,
    clientUrl: s.clientUrl,
    get running() {
      return procs[i] !== undefined && !procs[i]!.exited;
    },
    async kill() {
      await procs[i]?.stop("SIGKILL");
    },
    async restart() {
      if (procs[i] && !procs[i]!.exited) return;
      procs[i] = await spawnEtcd(argsOf(s), s.clientUrl, readyTimeoutMs);
    },
  }));
  return {
    members,
    endpoints: specs.map((s) => s.clientUrl),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
