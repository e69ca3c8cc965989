/**
 * The data directory at start: created if missing and proved writable, or a one-line
 * {@link ConfigError} naming `--data-dir`. Failing here, before the PKI and the store touch it,
 * gives the operator the reason instead of an error from deep inside whatever wrote first.
 *
 * @module
 */

import { ConfigError, osReason, quote } from "../config/mod.ts";
import { DIR_MODE } from "../storage/mod.ts";

/** Create `dir` (mode 0700) if needed and check that a file can be written in it. */
export async function prepareDataDir(dir: string): Promise<void> {
  try {
    await Deno.mkdir(dir, { recursive: true, mode: DIR_MODE });
  } catch (err) {
    throw new ConfigError(`--data-dir: cannot create ${quote(dir)}: ${osReason(err)}`, {
      cause: err,
    });
  }
  let probe: string | undefined;
  try {
    probe = await Deno.makeTempFile({ dir, prefix: ".write-check-" });
  } catch (err) {
    throw new ConfigError(`--data-dir: cannot write in ${quote(dir)}: ${osReason(err)}`, {
      cause: err,
    });
  } finally {
    if (probe) await Deno.remove(probe).catch(() => {});
  }
}
