/**
 * `--audit-log-path` with `--workers` > 1: one log for every thread. The main thread opens the
 * one writer (lib/audit/shared_log.ts) and hands its own events to it directly; each worker
 * hands its events over its link to the main thread (thread_link.ts). With one thread the
 * log backend of lib/audit/log_backend.ts is used as it always was.
 */

import {
  type AuditBackend,
  AuditLogWriter,
  type LogBackendOptions,
  openForwardingLogBackend,
} from "../../audit/mod.ts";
import type { StartOptions } from "./options.ts";

/** A thread's audit log backend, and on the main thread the writer the workers' lines go to. */
export interface ThreadsAuditLog {
  backend: AuditBackend;
  writer?: AuditLogWriter;
  /** Flushes this thread's events, then closes the writer (on the main thread). */
  close(): Promise<void>;
}

/** The log backend of this thread; throws the OS error when the main thread cannot open the
 * file. */
export function openThreadsAuditLog(opts: StartOptions, log: LogBackendOptions): ThreadsAuditLog {
  const forwarding = { mode: log.mode, batchBufferSize: log.batchBufferSize, logger: log.logger };
  if (opts.workerThread) {
    if (!opts.auditLogDelivery) throw new Error("a worker thread without its audit log link");
    const backend = openForwardingLogBackend({
      ...forwarding,
      deliver: opts.auditLogDelivery,
      onError: log.onError,
    });
    return { backend, close: () => backend.close() };
  }
  const writer = new AuditLogWriter(log);
  const backend = openForwardingLogBackend({
    ...forwarding,
    deliver: (text, events) => Promise.resolve(writer.write(text, events)),
    onError: log.onError,
  });
  return {
    backend,
    writer,
    close: async () => {
      await backend.close();
      await writer.close();
    },
  };
}
