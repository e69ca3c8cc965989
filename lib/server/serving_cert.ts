/**
 * The serving certificate, renewed while the server runs: a generated one before it expires
 * (30 days ahead, as at start), one from `--tls-cert-file` when the file changes. Each check
 * asks the PKI for the pair it would serve now (`ensurePki` renews or re-reads as needed); a
 * different pair goes to `onChange`, which starts serving it to new connections.
 */

import type { Logger } from "../api/mod.ts";

export interface ServingPair {
  certPem: string;
  keyPem: string;
}

export interface ServingCertOptions {
  /** The pair in service now. */
  current: ServingPair;
  /** The pair the PKI would serve now (may write a renewed one). */
  check: () => Promise<ServingPair>;
  onChange: (pair: ServingPair) => void | Promise<void>;
  /** @default one hour */
  intervalMs?: number;
  logger: Logger;
}

/** Starts the checks; the returned function stops them. */
export function renewServingCertificate(opts: ServingCertOptions): () => void {
  let current = opts.current;
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      const next = await opts.check();
      if (next.certPem !== current.certPem || next.keyPem !== current.keyPem) {
        await opts.onChange(next);
        current = next;
        opts.logger.info("serving certificate renewed: new connections get the new one");
      }
    } catch (err) {
      // The old pair stays in service; the next check tries again.
      opts.logger.warn(`serving certificate not renewed: ${(err as Error)?.message ?? err}`);
    } finally {
      running = false;
    }
  }, opts.intervalMs ?? 3_600_000);
  return () => clearInterval(timer);
}
