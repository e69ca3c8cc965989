/**
 * One HTTP(S) exchange with the TLS settings kubectl has and Deno's `fetch` lacks: a CA that
 * replaces the system roots, a client certificate, `--tls-server-name` (the name the serving
 * certificate is checked against, and sent as SNI) and `--insecure-skip-tls-verify`. Built on
 * `node:https`; the answer is a web `Response`, its gzip body already inflated.
 *
 * @module
 */

import http from "node:http";
import https from "node:https";
import { gunzipSync } from "node:zlib";
import { Buffer } from "node:buffer";

/** How to reach and trust the server. */
export interface TlsSettings {
  /** PEM CA certificates; given, only they are trusted (else the system roots). */
  caPem?: string;
  /** PEM client certificate chain and key. */
  certPem?: string;
  keyPem?: string;
  /** The name the serving certificate must carry, when not the URL's host. */
  serverName?: string;
  /** Trust any serving certificate. */
  insecure?: boolean;
}

/** One request. */
export interface ExchangeRequest {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** Bounds the whole exchange, headers to last byte; 0 or absent: no bound. */
  timeoutMs?: number;
}

/** The server could not be reached, or did not answer in time (kubectl's wording). */
export class ConnectionError extends Error {
  override name = "ConnectionError";
}

/**
 * Sends `req` to `url` and reads the whole answer.
 *
 * @throws {ConnectionError} `The connection to the server h:p was refused - did you specify the
 * right host or port?`, `Unable to connect to the server: <reason>`, or a timeout.
 */
export function exchange(url: URL, req: ExchangeRequest, tls: TlsSettings): Promise<Response> {
  const secure = url.protocol === "https:";
  const hostPort = url.host;
  return new Promise<Response>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (f: () => void) => {
      clearTimeout(timer);
      f();
    };
    const options: https.RequestOptions = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port || (secure ? 443 : 80),
      path: url.pathname + url.search,
      method: req.method,
      headers: req.headers,
      agent: false,
    };
    if (secure) {
      if (tls.caPem) options.ca = [tls.caPem];
      if (tls.certPem && tls.keyPem) {
        options.cert = tls.certPem;
        options.key = tls.keyPem;
      }
      if (tls.serverName) options.servername = tls.serverName;
      options.rejectUnauthorized = !tls.insecure;
    }
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", (err) => settle(() => reject(unreachable(hostPort, err))));
      res.on("end", () =>
        settle(() => {
          let body: Uint8Array = Buffer.concat(chunks);
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v === undefined) continue;
            for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
          }
          if (headers.get("content-encoding") === "gzip" && body.length > 0) {
            body = gunzipSync(body);
            headers.delete("content-encoding");
          }
          const status = res.statusCode ?? 500;
          const empty = status === 204 || status === 304 || req.method === "HEAD";
          resolve(new Response(empty ? null : new Uint8Array(body), { status, headers }));
        }));
    };
    const request = secure ? https.request(options, onResponse) : http.request(options, onResponse);
    request.on("error", (err) => settle(() => reject(unreachable(hostPort, err))));
    if (req.timeoutMs && req.timeoutMs > 0) {
      timer = setTimeout(() => {
        request.destroy();
        reject(
          new ConnectionError(
            `Unable to connect to the server: the request to ${hostPort} did not finish ` +
              `within the request timeout (${req.timeoutMs}ms)`,
          ),
        );
      }, req.timeoutMs);
    }
    request.end(req.body ? Buffer.from(req.body) : undefined);
  });
}

function unreachable(hostPort: string, err: Error & { code?: string }): ConnectionError {
  if (err.code === "ECONNREFUSED" || /connection refused/i.test(err.message)) {
    return new ConnectionError(
      `The connection to the server ${hostPort} was refused - did you specify the right host ` +
        "or port?",
    );
  }
  return new ConnectionError(`Unable to connect to the server: ${err.message.split("\n")[0]}`);
}
