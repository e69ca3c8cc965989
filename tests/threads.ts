// deno-lint-ignore-file no-explicit-any
/**
 * Test helpers for `--workers=N`: requests each on a connection of its own (a fresh client:
 * the kernel picks the thread, SO_REUSEPORT), and the check that more than one thread served
 * them, read from `/metrics` (`platform_thread_requests_total{thread}`).
 */

import type { TestServer } from "./harness.ts";
import { assert, assertEquals } from "./assert.ts";

/** Where a server listens and how to talk to it as the admin. */
export interface Endpoint {
  url: string;
  caCertPem: string;
  adminToken: string;
}

/** One request on a connection of its own; the body as text, and parsed when it is JSON. */
export async function onNewConnection(
  server: Endpoint,
  method: string,
  path: string,
  body?: unknown,
): Promise<
  { status: number; body: Record<string, any> | string; text: string; headers: Headers }
> {
  const client = Deno.createHttpClient({ caCerts: [server.caCertPem] });
  try {
    const res = await fetch(server.url + path, {
      method,
      client,
      headers: {
        Authorization: `Bearer ${server.adminToken}`,
        ...(body ? { "Content-Type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const answer = { status: res.status, text, headers: res.headers };
    try {
      return { ...answer, body: JSON.parse(text) };
    } catch {
      return { ...answer, body: text };
    }
  } finally {
    client.close();
  }
}

/** The sum of `apiserver_request_total` in one scrape (every thread's, merged). */
export function requestTotal(metrics: string): number {
  let sum = 0;
  for (const line of metrics.split("\n")) {
    if (line.startsWith("apiserver_request_total{")) sum += Number(line.split(" ").at(-1));
  }
  return sum;
}

/** `platform_thread_requests_total` of one scrape: requests served, by thread. */
export function requestsByThread(metrics: string): Map<string, number> {
  const out = new Map<string, number>();
  for (
    const m of metrics.matchAll(/^platform_thread_requests_total\{thread="([^"]+)"\} (\S+)$/gm)
  ) {
    out.set(m[1], Number(m[2]));
  }
  return out;
}

/**
 * Sends 24 requests over new connections, then asserts from `/metrics` (whichever thread
 * answers, it answers for all) that more than one thread served requests, or with `workers` = 1
 * that the main thread served them all.
 */
export async function assertThreadsServed(server: Endpoint, workers: number): Promise<void> {
  let byThread = new Map<string, number>();
  for (let i = 0; i < 24; i++) {
    const res = await onNewConnection(server, "GET", "/metrics");
    assertEquals(res.status, 200);
    byThread = requestsByThread(res.body as string);
  }
  const served = [...byThread].filter(([, n]) => n > 0).map(([t]) => t);
  if (workers === 1) {
    // One thread has no thread series at all (nothing registers them).
    assertEquals(served, [], `one thread: ${[...byThread]}`);
  } else {
    assertEquals(
      byThread.size,
      workers,
      `--workers=${workers}: threads in /metrics: ${[...byThread]}`,
    );
    assert(served.length > 1, `--workers=${workers}: only ${served} served: ${[...byThread]}`);
  }
}

/**
 * A {@link TestServer} whose every request goes over a new connection (for `openWatch` and
 * the like); the clients of streamed responses close when it is disposed.
 */
export function perConnection(server: Endpoint): TestServer {
  const clients = new Set<Deno.HttpClient>();
  const send = (
    method: string,
    path: string,
    o: Parameters<TestServer["request"]>[2] = {},
  ): { client: Deno.HttpClient; response: Promise<Response> } => {
    const client = Deno.createHttpClient({ caCerts: [server.caCertPem] });
    clients.add(client);
    const headers: Record<string, string> = { ...o.headers };
    const token = o.token === undefined ? server.adminToken : o.token;
    if (token) headers["Authorization"] = `Bearer ${token}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
      headers["Content-Type"] ??= "application/json";
    }
    return { client, response: fetch(server.url + path, { method, headers, body, client }) };
  };
  return {
    server: server as TestServer["server"],
    request: (method, path, o) => send(method, path, o).response,
    async json(method, path, o) {
      const { client, response } = send(method, path, o);
      try {
        const res = await response;
        const text = await res.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch { /* not JSON */ }
        return { status: res.status, body, headers: res.headers };
      } finally {
        clients.delete(client);
        client.close();
      }
    },
    [Symbol.asyncDispose]() {
      for (const c of clients) c.close();
      clients.clear();
      return Promise.resolve();
    },
  };
}
