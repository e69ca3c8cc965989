/**
 * etcd's own write rate, for `--only=workers`: wrk POSTing puts to etcd's JSON gateway
 * (`/v3/kv/put`, etcd 3.4), each to a new key with a value of about the size of a stored
 * configmap, on as many connections as the server's figures use. Every put is durable when
 * etcd answers (its WAL fsync'd), as a create of the file store is.
 */

import { type WrkResult, wrkScript } from "./wrk.ts";

/** base64 of a string of Latin-1 characters. */
function b64(s: string): string {
  return btoa(s);
}

/**
 * The wrk script: keys `<prefix><9 digits>`. base64 turns every 3 bytes into 4 characters, so
 * with a prefix of a multiple of 3 bytes the key's base64 is the prefix's followed by that of
 * each group of 3 digits, taken from a table of the 1,000 groups.
 */
function putScript(prefix: string, value: string): string {
  const padded = prefix.padEnd(Math.ceil(prefix.length / 3) * 3, "-");
  const groups = Array.from({ length: 1000 }, (_, i) => `"${b64(String(i).padStart(3, "0"))}"`);
  return [
    `wrk.method = "POST"`,
    `wrk.headers["Content-Type"] = "application/json"`,
    `local T = {${groups.join(",")}}`,
    `local prefix = "${b64(padded)}"`,
    `local value = "${b64(value)}"`,
    `local n = 0`,
    `request = function()`,
    `  n = n + 1`,
    `  local a = math.floor(n / 1000000) % 1000`,
    `  local b = math.floor(n / 1000) % 1000`,
    `  local c = n % 1000`,
    `  local key = prefix .. T[a + 1] .. T[b + 1] .. T[c + 1]`,
    `  return wrk.format(nil, "/v3/kv/put", nil, '{"key":"' .. key .. '","value":"' .. value .. '"}')`,
    `end`,
  ].join("\n") + "\n";
}

/** A configmap as the file store keeps one (about 300 bytes of JSON). */
const VALUE = JSON.stringify({
  kind: "ConfigMap",
  apiVersion: "v1",
  metadata: {
    name: "bench-x7k2p",
    generateName: "bench-",
    namespace: "default",
    uid: "6f1c2a52-8d1e-4a43-9b7e-2f4f3c0c9d11",
    resourceVersion: "123456",
    creationTimestamp: "2026-11-27T23:00:00Z",
  },
  data: { a: "1", b: "2", c: "3" },
});

/** Puts/s of wrk with `connections` connections for `ms` against etcd at `clientUrl`; `round`
 * keeps each run's keys apart. */
export function etcdGatewayPuts(
  clientUrl: string,
  connections: number,
  ms: number,
  round: number,
): Promise<WrkResult> {
  return wrkScript(
    `${clientUrl}/v3/kv/put`,
    putScript(`/bench-puts/r${round}/`, VALUE),
    connections,
    ms,
  );
}
