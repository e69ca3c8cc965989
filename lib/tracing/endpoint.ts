/**
 * The `endpoint` of a `TracingConfiguration`, as kube reads it: a gRPC target, `host:port`
 * (the default `localhost:4317`), `dns://[authority]/host:port` or `unix:///path`; the
 * connection is insecure (no TLS), as kube's. kube also takes `unix-abstract:name`, which the
 * gRPC client cannot dial: refused here, by name.
 *
 * @module
 */

/** kube's default collector address. */
export const DEFAULT_TRACING_ENDPOINT = "localhost:4317";

/** Why `endpoint` is not a gRPC target kube accepts, or undefined when it is. */
export function endpointProblem(endpoint: string): string | undefined {
  if (endpoint.startsWith("unix-abstract:")) {
    return "unsupported scheme: unix-abstract (use unix:///path)";
  }
  const withScheme = endpoint.includes("//") ? endpoint : `dns://${endpoint}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return `not a valid address`;
  }
  const scheme = url.protocol.replace(/:$/, "");
  if (!["dns", "unix"].includes(scheme)) {
    return `unsupported scheme: ${scheme}. Options are none, dns or unix`;
  }
  if (scheme === "dns" && !hostPort(url).host) return "no host";
  return undefined;
}

/** The gRPC target the export worker dials for `endpoint` (already checked): `host:port`
 * (a `dns://` endpoint's host and port; its authority is not used, as the OpenTelemetry
 * exporter did not use it) or `unix:///path`. */
export function grpcTarget(endpoint: string): string {
  if (!endpoint.includes("//")) return endpoint;
  const url = new URL(endpoint);
  if (url.protocol !== "dns:") return endpoint;
  const { host, port } = hostPort(url);
  return port ? `${host}:${port}` : host;
}

/** `dns://host:port` or `dns://authority/host:port`: the target's host and port. */
function hostPort(url: URL): { host: string; port: string } {
  const target = url.pathname.replace(/^\//, "");
  if (target === "") return { host: url.hostname, port: url.port };
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(target);
  return { host: m?.[1] ?? "", port: m?.[2] ?? "" };
}
