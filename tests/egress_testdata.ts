/**
 * Fixtures of the egress tests: an EgressSelectorConfiguration file in a temp directory, and a
 * logger whose lines the test reads.
 *
 * @module
 */

import { join } from "node:path";
import { stringify } from "yaml";
import { createLogger } from "../lib/api/log.ts";

export type Json = Record<string, unknown>;

/** A selection's `connection` through an HTTP CONNECT proxy at `url` (tcp) or a socket. */
export function viaProxy(proxy: { url: string } | { udsName: string }): Json {
  return {
    proxyProtocol: "HTTPConnect",
    transport: "url" in proxy ? { tcp: { url: proxy.url } } : { uds: { udsName: proxy.udsName } },
  };
}

/** An EgressSelectorConfiguration file of `selections` (name → connection), removed on
 * dispose. */
export async function egressConfigFile(
  selections: Record<string, Json>,
): Promise<{ path: string; dir: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "platform-egress-test-" });
  const path = join(dir, "egress-selector.yaml");
  await Deno.writeTextFile(
    path,
    stringify({
      apiVersion: "apiserver.k8s.io/v1beta1",
      kind: "EgressSelectorConfiguration",
      egressSelections: Object.entries(selections).map(([name, connection]) => ({
        name,
        connection,
      })),
    }),
  );
  return { path, dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

/** A logger keeping every line (warnings and up) for the test to read. */
export function recordingLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger("warn", (line) => lines.push(line)) };
}
