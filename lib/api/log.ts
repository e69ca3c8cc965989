/** A small leveled logger writing one line per message to stderr. */

export type LogLevel = "debug" | "info" | "warn" | "error";

const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface Logger {
  debug(msg: string, ...extra: unknown[]): void;
  info(msg: string, ...extra: unknown[]): void;
  warn(msg: string, ...extra: unknown[]): void;
  error(msg: string, ...extra: unknown[]): void;
}

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
// deno-lint-ignore no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const SHORT: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * A log line with every control character escaped (`\n`, `\u001b`): what a request carries
 * (names, paths, error messages) can neither start a forged line nor drive the terminal.
 * Backslashes are left alone, so an escape in the output is ambiguous with a literal one.
 */
export function escapeControl(line: string): string {
  return line.replace(
    UNSAFE,
    (c) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function format(extra: unknown[]): string {
  return extra.map((
    e,
  ) => (e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e)))
    .join(" ");
}

/** Logs at `level` and above; `sink` defaults to stderr. */
export function createLogger(
  level: LogLevel = "info",
  sink: (line: string) => void = (line) => console.error(line),
): Logger {
  const at = (l: LogLevel) => (msg: string, ...extra: unknown[]) => {
    if (ORDER[l] < ORDER[level]) return;
    const tail = extra.length ? ` ${format(extra)}` : "";
    sink(escapeControl(`${new Date().toISOString()} ${l.toUpperCase().padEnd(5)} ${msg}${tail}`));
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** A logger that drops everything (embedded servers in tests). */
export const silentLogger: Logger = createLogger("error", () => {});
