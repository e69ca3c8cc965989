/**
 * Two `platform` servers in one process, for figures that compare a feature on and off
 * (bench/metrics.ts): the first as `platform serve` starts by default, the second with
 * `metrics: false` (nothing measured, `/metrics` not served). Sharing one process, they share
 * its runtime, heap, compiled code and place on the CPUs, so that rounds alternating between
 * them differ only by the feature. Two separate processes running the same code differed by
 * 1–7 % in requests/s here, more than the 5 % a target had to read.
 *
 *   deno run -A bench/server_pair.ts <data dir of the first> <data dir of the second>
 *
 * Prints `second server on https://127.0.0.1:<port>`, then `serving on https://…` (the first
 * one's) on standard error once both listen; stops both on SIGTERM.
 */

import { createLogger } from "../lib/api/mod.ts";
import { startServer } from "../lib/server/server.ts";

const [first, second] = Deno.args;
if (!first || !second) {
  console.error("usage: deno run -A bench/server_pair.ts <data dir> <data dir>");
  Deno.exit(2);
}
const logger = createLogger("warn");
const on = await startServer({ dataDir: first, logger });
const off = await startServer({ dataDir: second, logger, metrics: false });
console.error(`second server on ${off.url}`);
console.error(`serving on ${on.url}`);

Deno.addSignalListener("SIGTERM", async () => {
  await Promise.all([on.close(), off.close()]);
  Deno.exit(0);
});
