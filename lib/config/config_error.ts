/**
 * {@link ConfigError}, the one error type of the configuration layer, and the two helpers every
 * configuration message uses: {@link quote} for the offending value and {@link osReason} for
 * why a file could not be used. Every module of lib/config builds its errors from these.
 *
 * @module
 */

/**
 * Bad configuration. `message` is the one line to print before exiting with status 2; it
 * names the flag (`--secure-port: …`) or the file and field path
 * (`config.yaml: featureGates.WatchList: …`).
 *
 * Configuration errors are not API errors: they never reach HTTP.
 */
export class ConfigError extends Error {
  override name = "ConfigError";

  /**
   * Prefix the message of a value error with where the value came from.
   *
   * @example
   * ```ts
   * ConfigError.at("--secure-port", new Error('"abc" is not a port number (0-65535)'));
   * ```
   */
  static at(where: string, cause: unknown): ConfigError {
    const message = cause instanceof Error ? cause.message : String(cause);
    return new ConfigError(`${where}: ${message}`, { cause });
  }
}

/** JSON-quote strings, print other values as they are: used in every value error. */
export function quote(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** The OS reason of a file-system error without Deno's `(os error N): op 'path'` tail. */
export function osReason(err: unknown): string {
  if (err instanceof Deno.errors.NotFound) return "No such file or directory";
  if (err instanceof Deno.errors.PermissionDenied) return "Permission denied";
  if (err instanceof Deno.errors.IsADirectory) return "Is a directory";
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/ \(os error \d+\).*$/s, "");
}
