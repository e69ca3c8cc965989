/**
 * Two `platform` servers in one process, for figures that compare a feature on and off
 * (bench/metrics.ts): one as `platform serve` starts by default, the other with
 * `metrics: false` (nothing measured, `/metrics` not served). Sharing one process, they share
 * its runtime, heap, compiled code and place on the CPUs, so that rounds alternating between
 * them differ only by the feature. Two separate processes running the same code differed by
 * 1–7 % in requests/s here, more than the 5 % a target had to read.
 *
 *   deno run -A bench/server_pair.ts <metrics-on data dir> <metrics-off data dir> [--off-first]
 *
 * `--off-first` starts the one with metrics off first. Prints `metrics-off server on
 * https://127.0.0.1:<port>`, then `serving on https://…` (the other one's) on standard error
 * once both listen; stops both on SIGTERM.
 */

import { createLogger } from "../lib/api/mod.ts";
import { type ServerHandle, startServer } from "../lib/server/server.ts";

const [first, second, order] = Deno.args;
if (!first || !second || (order !== undefined && order !== "--off-first")) {
  console.error("usage: deno run -A bench/server_pair.ts <data dir> <data dir> [--off-first]");
  Deno.exit(2);
}
const logger = createLogger("warn");
const startOn = () => startServer({ dataDir: first, logger });
const startOff = () => startServer({ dataDir: second, logger, metrics: false });
let on: ServerHandle, off: ServerHandle;
if (order === "--off-first") {
  off = await startOff();
  on = await startOn();
} else {
  on = await startOn();
  off = await startOff();
}
console.error(`metrics-off server on ${off.url}`);
console.error(`serving on ${on.url}`);

Deno.addSignalListener("SIGTERM", async () => {
  await Promise.all([on.close(), off.close()]);
  Deno.exit(0);
});
