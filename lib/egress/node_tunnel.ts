/**
 * A tunnel through the egress relay as a `node:net` socket, for clients whose TLS is Node's
 * (`node:tls` over the socket): the relay is asked `CONNECT host:port` with its password, and
 * the socket is handed over once it answers 200.
 * @module
 */

import * as net from "node:net";
import { Buffer } from "node:buffer";
import { EgressError } from "./proxy_connect.ts";

/** Bound of the relay's answer to CONNECT. */
const HANDSHAKE_TIMEOUT_MS = 30_000;
const MAX_HEAD = 16 * 1024;

export function nodeTunnel(
  relayPort: number,
  proxyAuthorization: string,
  hostPort: string,
  proxyName: string,
): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(relayPort, "127.0.0.1");
    let head = Buffer.alloc(0);
    const fail = (message: string) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new EgressError(`proxy ${proxyName}, CONNECT to ${hostPort}: ${message}`));
    };
    const timer = setTimeout(() => fail("no answer"), HANDSHAKE_TIMEOUT_MS);
    socket.once("connect", () => {
      socket.write(
        `CONNECT ${hostPort} HTTP/1.1\r\nHost: ${hostPort}\r\n` +
          `Proxy-Authorization: ${proxyAuthorization}\r\n\r\n`,
      );
    });
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_HEAD) fail("answer too long");
        return;
      }
      socket.off("data", onData);
      socket.off("error", onError);
      clearTimeout(timer);
      const status = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
      if (!/^HTTP\/1\.[01] 200\b/.test(status)) {
        socket.destroy();
        return reject(
          new EgressError(
            `proxy ${proxyName} refused CONNECT to ${hostPort}: ${JSON.stringify(status)}`,
          ),
        );
      }
      // Anything after the answer belongs to the tunnel (TLS starts with the client: none).
      if (head.length > end + 4) socket.unshift(head.subarray(end + 4));
      resolve(socket);
    };
    const onError = (err: Error) => fail(err.message);
    socket.on("data", onData);
    socket.on("error", onError);
  });
}
