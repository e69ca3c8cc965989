/**
 * The listen address of the server: {@link hostPort} for messages and logs, and the one-line
 * message of a failed listen ({@link describeListenError}, naming the flag to change), which
 * both the start-up check ({@link checkPortFree}) and the server's own listen use.
 *
 * @module
 */

import { ConfigError, osReason, quote } from "./config_error.ts";

/** `127.0.0.1:6443`, `[::1]:6443`. */
export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The one-line message for a failed listen (from `Deno.listen` or `Deno.serve`), naming the
 * flag to change, e.g. `--secure-port: 127.0.0.1:6443 is already in use`.
 */
export function describeListenError(err: unknown, host: string, port: number): string {
  const at = hostPort(host, port);
  if (err instanceof Deno.errors.AddrInUse) return `--secure-port: ${at} is already in use`;
  if (err instanceof Deno.errors.PermissionDenied) {
    return `--secure-port: permission denied to listen on ${at}`;
  }
  if (err instanceof Deno.errors.AddrNotAvailable) {
    return `--bind-address: ${quote(host)} is not an address of this machine`;
  }
  const reason = osReason(err);
  // A host name that does not resolve (getaddrinfo's words, as Deno passes them on).
  const lookup = /failed to lookup address information: (.*)/.exec(reason);
  if (lookup) return `--bind-address: cannot resolve ${quote(host)}: ${lookup[1]}`;
  return `--bind-address: cannot listen on ${at}: ${reason}`;
}

/**
 * Check that `host:port` can be listened on, by listening and closing at once. Port 0 always
 * passes. Another process may still take the port before the server binds it, so startup
 * must also pass its own listen error through {@link describeListenError}.
 *
 * @throws {ConfigError} with the message of {@link describeListenError}.
 */
export function checkPortFree(host: string, port: number): void {
  try {
    const listener = Deno.listen({ hostname: host, port, transport: "tcp" });
    listener.close();
  } catch (err) {
    throw new ConfigError(describeListenError(err, host, port), { cause: err });
  }
}
