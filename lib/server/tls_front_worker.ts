/**
 * The worker of the TLS front (see `tls_front.ts`): a `node:tls` server on the public port
 * that asks every client for a certificate (`requestCert`, the client CA's names in the
 * CertificateRequest, `rejectUnauthorized: false` so that clients without one still connect)
 * and forwards each connection's plaintext to the server's loopback listener.
 *
 * For each connection, once the handshake is done (which proves that a client presenting a
 * certificate holds its key), it connects to the loopback listener, reports the local address
 * of that connection with the presented chain, and starts forwarding only when the main thread
 * has registered it; it reports the end of the connection too.
 *
 * Messages in: `listen`, `admit` (of a reported connection), `stop` (stop accepting).
 * Messages out: `listening`, `listen-error`, `connection`, `closed`.
 *
 * @module
 */

import * as net from "node:net";
import * as tls from "node:tls";

/** Starts the server: the public address, the serving pair, the client CA, the upstream. */
export interface ListenMessage {
  type: "listen";
  hostname: string;
  port: number;
  certPem: string;
  keyPem: string;
  clientCAPem: string;
  upstream: { hostname: string; port: number };
  /** `--workers`: every thread's front listens on the port (SO_REUSEPORT). */
  reusePort: boolean;
  /** Connections at most, overall and per client address; the TLS handshake's time limit. */
  limits: { maxConnections: number; maxConnectionsPerClient: number; handshakeTimeoutMs: number };
}

/** Sent when a connection's handshake is done and its upstream connection is open. */
export interface ConnectionMessage {
  type: "connection";
  id: number;
  /** `host:port` of the upstream connection's local end: the inner server's remoteAddr. */
  key: string;
  /** Whether node:tls verified the presented chain against the client CA. */
  authorized: boolean;
  /** Why not, as node:tls says. */
  authorizationError?: string;
  /** The presented certificate and the issuers node:tls reports for it, DER. */
  chain: Uint8Array[];
  /** The client's address (audit events' `sourceIPs`). */
  peer: string;
}

export type WorkerIn =
  | ListenMessage
  | { type: "admit"; id: number }
  | { type: "certificate"; certPem: string; keyPem: string }
  | { type: "stop" };
export type WorkerOut =
  | { type: "listening"; port: number }
  | { type: "listen-error"; code?: string; message: string }
  | ConnectionMessage
  | { type: "closed"; key: string };

const scope = self as unknown as {
  postMessage(message: WorkerOut): void;
  onmessage: ((e: MessageEvent<WorkerIn>) => void) | null;
};

let server: tls.Server | undefined;
/** Connections waiting for `admit`, by id. */
const waiting = new Map<number, () => void>();
let nextId = 1;
/** Handshake timers of the connections still in their handshake, by client address:port. */
const handshaking = new Map<string, ReturnType<typeof setTimeout>>();
/** Open connections per client address. */
const perClient = new Map<string, number>();

scope.onmessage = (e) => {
  const m = e.data;
  switch (m.type) {
    case "listen":
      listen(m);
      break;
    case "admit": {
      const start = waiting.get(m.id);
      waiting.delete(m.id);
      start?.();
      break;
    }
    case "certificate":
      // Later handshakes use the renewed pair; the client CA stays.
      server?.setSecureContext({ ...secureContext, cert: m.certPem, key: m.keyPem });
      break;
    case "stop":
      server?.close();
      break;
  }
};

/** What the server's secure context was made from. */
let secureContext: tls.SecureContextOptions = {};

function listen(m: ListenMessage) {
  secureContext = { cert: m.certPem, key: m.keyPem, ca: m.clientCAPem };
  server = tls.createServer({
    ...secureContext,
    requestCert: true,
    rejectUnauthorized: false,
    ALPNProtocols: ["h2", "http/1.1"],
    handshakeTimeout: m.limits.handshakeTimeoutMs,
  }, (socket) => forward(socket, m.upstream));
  server.maxConnections = m.limits.maxConnections;
  // Over the per-client limit a connection is closed before its handshake.
  server.on("connection", (socket: net.Socket) => {
    const client = socket.remoteAddress ?? "";
    const n = (perClient.get(client) ?? 0) + 1;
    perClient.set(client, n);
    socket.once("close", () => {
      const left = (perClient.get(client) ?? 1) - 1;
      if (left > 0) perClient.set(client, left);
      else perClient.delete(client);
    });
    if (n > m.limits.maxConnectionsPerClient) {
      socket.destroy();
      return;
    }
    // The handshake's time limit, kept here: node:tls's own does not end a client that never
    // sends its ClientHello.
    const key = `${client}:${socket.remotePort}`;
    handshaking.set(key, setTimeout(() => socket.destroy(), m.limits.handshakeTimeoutMs));
    socket.once("close", () => {
      clearTimeout(handshaking.get(key));
      handshaking.delete(key);
    });
  });
  // A failed handshake concerns that client only.
  server.on("tlsClientError", () => {});
  server.once("error", (err: NodeJS.ErrnoException) => {
    scope.postMessage({ type: "listen-error", code: err.code, message: err.message });
  });
  server.listen({ port: m.port, host: m.hostname, reusePort: m.reusePort }, () => {
    const address = server!.address() as net.AddressInfo;
    scope.postMessage({ type: "listening", port: address.port });
  });
}

function forward(client: tls.TLSSocket, upstream: { hostname: string; port: number }) {
  const peer = `${client.remoteAddress}:${client.remotePort}`;
  clearTimeout(handshaking.get(peer));
  handshaking.delete(peer);
  client.setNoDelay(true);
  const id = nextId++;
  const chain = peerChain(client);
  const inner = net.connect({ host: upstream.hostname, port: upstream.port });
  inner.setNoDelay(true);
  let key: string | undefined;
  let done = false;
  const end = () => {
    if (done) return;
    done = true;
    waiting.delete(id);
    client.destroy();
    inner.destroy();
    if (key !== undefined) scope.postMessage({ type: "closed", key });
  };
  client.on("error", end).on("close", end);
  inner.on("error", end).on("close", end);
  inner.once("connect", () => {
    if (done) return;
    key = `${inner.localAddress}:${inner.localPort}`;
    waiting.set(id, () => {
      if (done) return;
      relay(client, inner);
      relay(inner, client);
    });
    scope.postMessage({
      type: "connection",
      id,
      key,
      authorized: client.authorized,
      authorizationError: client.authorizationError ? String(client.authorizationError) : undefined,
      chain,
      peer: client.remoteAddress ?? "",
    });
  });
}

/** Copy what `from` reads to `to`, pausing while `to` is full (cheaper than `pipe`). */
function relay(from: net.Socket, to: net.Socket) {
  from.on("data", (chunk: Uint8Array) => {
    if (!to.write(chunk)) {
      from.pause();
      to.once("drain", () => from.resume());
    }
  });
  from.once("end", () => to.end());
}

/** The DER of the peer's certificate (none: empty), then of each issuer node:tls links to it. */
function peerChain(socket: tls.TLSSocket): Uint8Array[] {
  const out: Uint8Array[] = [];
  let cert: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert?.raw && out.length < 10) {
    out.push(new Uint8Array(cert.raw));
    const next: tls.DetailedPeerCertificate | undefined = cert.issuerCertificate;
    if (!next || next === cert || next.raw?.equals(cert.raw)) break;
    cert = next;
  }
  return out;
}
