/**
 * Response compression over real HTTPS. fetch decompresses gzip bodies by itself, so the
 * bodies are checked on the wire with a plain HTTP/1.1 client over TLS.
 */

import { assert, assertEquals } from "./assert.ts";
import { ownConfigMaps, type TestServer, testServer } from "./harness.ts";
import { GZIP_THRESHOLD_BYTES } from "../lib/server/filters/compression.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface RawResponse {
  status: number;
  headers: Headers;
  /** The body as sent, before any content decoding. */
  body: Uint8Array<ArrayBuffer>;
}

/** One GET over its own TLS connection, read to the end, without decoding the body. */
async function rawGet(
  t: TestServer,
  path: string,
  acceptEncoding: string,
  accept = "*/*",
): Promise<RawResponse> {
  const { hostname, port, caCertPem, adminToken } = t.server;
  const conn = await Deno.connectTls({ hostname, port, caCerts: [caCertPem] });
  const head = [
    `GET ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    `Authorization: Bearer ${adminToken}`,
    `Accept-Encoding: ${acceptEncoding}`,
    `Accept: ${accept}`,
    "Connection: close",
  ];
  await conn.write(encoder.encode(head.join("\r\n") + "\r\n\r\n"));
  const raw = await new Response(conn.readable).bytes();
  let end = 0;
  while (!(raw[end] === 13 && raw[end + 1] === 10 && raw[end + 2] === 13 && raw[end + 3] === 10)) {
    end++;
  }
  const [statusLine, ...fields] = decoder.decode(raw.subarray(0, end)).split("\r\n");
  const headers = new Headers(fields.map((f) => {
    const colon = f.indexOf(":");
    return [f.slice(0, colon).trim(), f.slice(colon + 1).trim()] as [string, string];
  }));
  let body = raw.slice(end + 4);
  if (headers.get("Transfer-Encoding") === "chunked") body = dechunk(body);
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

/** Undoes chunked transfer coding (no trailers expected). */
function dechunk(data: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf(10, at);
    const size = parseInt(decoder.decode(data.subarray(at, lineEnd)), 16);
    if (size === 0) break;
    parts.push(data.subarray(lineEnd + 1, lineEnd + 1 + size));
    at = lineEnd + 1 + size + 2;
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

async function gunzip(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

/** A configmap of about `bytes` bytes of data, a config file of varied lines. */
function configMap(name: string, bytes: number) {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < bytes; i++) {
    const line = `setting.${name}.${i} = ${(i * 7919) % 10007}\n`;
    lines.push(line);
    n += line.length;
  }
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name },
    data: { text: lines.join("") },
  };
}

async function create(t: TestServer, name: string, bytes: number): Promise<void> {
  const res = await t.json("POST", CM, { body: configMap(name, bytes) });
  assertEquals(res.status, 201);
}

/** The body as served without compression. */
async function identityBody(t: TestServer, path: string): Promise<string> {
  const res = await rawGet(t, path, "identity");
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("Content-Encoding"), null);
  return decoder.decode(res.body);
}

function assertCompressed(res: RawResponse, vary = "Accept-Encoding"): void {
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("Content-Encoding"), "gzip");
  assertEquals(res.headers.get("Vary"), vary);
  const length = res.headers.get("Content-Length");
  if (length !== null) assertEquals(Number(length), res.body.length);
  assertEquals([res.body[0], res.body[1]], [0x1f, 0x8b], "the gzip magic number");
}

function assertPlain(res: RawResponse, status = 200): void {
  assertEquals(res.status, status);
  assertEquals(res.headers.get("Content-Encoding"), null);
  assertEquals(res.headers.get("Vary"), null);
}

Deno.test("a list over the threshold is gzipped for clients that accept gzip", async () => {
  await using t = await testServer();
  for (const name of ["a", "b", "c"]) await create(t, name, GZIP_THRESHOLD_BYTES / 2);
  const plain = await identityBody(t, CM);
  assert(plain.length > GZIP_THRESHOLD_BYTES, `list of ${plain.length} bytes`);

  for (const accept of ["gzip", "br;q=1.0, gzip;q=0.8", "*", "GZIP"]) {
    const res = await rawGet(t, CM, accept);
    assertCompressed(res);
    assert(res.body.length < plain.length / 2, `${res.body.length} of ${plain.length} bytes`);
    assertEquals(await gunzip(res.body), plain, `Accept-Encoding: ${accept}`);
  }
  // fetch asks for gzip itself and decodes it: clients that do so see the same list.
  const viaFetch = await t.json("GET", CM);
  assertEquals(viaFetch.headers.get("Content-Encoding"), "gzip");
  assertEquals(ownConfigMaps(viaFetch.body.items).length, 3);
  assertEquals(viaFetch.body, JSON.parse(plain));

  // gzip;q=0 and no gzip at all get the plain list.
  for (const accept of ["gzip;q=0", "gzip;q=0, *", "br", "identity"]) {
    const res = await rawGet(t, CM, accept);
    assertPlain(res);
    assertEquals(decoder.decode(res.body), plain, `Accept-Encoding: ${accept}`);
  }
});

Deno.test("a get is gzipped over the threshold only", async () => {
  await using t = await testServer();
  await create(t, "small", 100);
  await create(t, "large", GZIP_THRESHOLD_BYTES + 1024);

  const small = await rawGet(t, `${CM}/small`, "gzip");
  assertPlain(small);
  assert(small.body.length < GZIP_THRESHOLD_BYTES);
  assertEquals(JSON.parse(decoder.decode(small.body)).metadata.name, "small");

  const large = await rawGet(t, `${CM}/large`, "gzip");
  assertCompressed(large);
  assertEquals(await gunzip(large.body), await identityBody(t, `${CM}/large`));
});

Deno.test("watch streams and errors are not compressed", async () => {
  await using t = await testServer();
  for (const name of ["a", "b", "c"]) await create(t, name, GZIP_THRESHOLD_BYTES / 2);

  // The initial events alone are more than the threshold.
  const watch = await t.request("GET", `${CM}?watch=1&resourceVersion=0`, {
    headers: { "Accept-Encoding": "gzip" },
  });
  assertEquals(watch.status, 200);
  assertEquals(watch.headers.get("Content-Encoding"), null);
  const reader = watch.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) text += (await reader.read()).value;
  assertEquals(JSON.parse(text.slice(0, text.indexOf("\n"))).type, "ADDED");
  await reader.cancel();

  const missing = await rawGet(t, `${CM}/nope`, "gzip");
  assertPlain(missing, 404);
  assertEquals(JSON.parse(decoder.decode(missing.body)).reason, "NotFound");
});

Deno.test("the OpenAPI documents are gzipped too, with a weak ETag", async () => {
  await using t = await testServer();
  const plain = await rawGet(t, "/openapi/v3/api/v1", "identity");
  assert(plain.body.length > GZIP_THRESHOLD_BYTES);
  const res = await rawGet(t, "/openapi/v3/api/v1", "gzip");
  assertCompressed(res);
  assertEquals(res.headers.get("ETag"), `W/${plain.headers.get("ETag")}`);
  assertEquals(await gunzip(res.body), decoder.decode(plain.body));
});

Deno.test("OpenAPI v2's JSON and protobuf forms share an ETag but each gets its own gzip, also when kept", async () => {
  await using t = await testServer();
  const PROTO = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
  for (const accept of ["application/json", PROTO, "application/json", PROTO]) {
    const plain = await rawGet(t, "/openapi/v2", "identity", accept);
    const res = await rawGet(t, "/openapi/v2", "gzip", accept);
    assertCompressed(res, "Accept, Accept-Encoding");
    assertEquals(res.headers.get("Content-Type"), plain.headers.get("Content-Type"));
    assertEquals(res.headers.get("ETag"), `W/${plain.headers.get("ETag")}`);
    const unzipped = new Uint8Array(
      await new Response(new Blob([res.body]).stream().pipeThrough(new DecompressionStream("gzip")))
        .arrayBuffer(),
    );
    assertEquals(unzipped, plain.body, accept);
  }
});

Deno.test("--feature-gates=APIResponseCompression=false turns compression off", async () => {
  await using t = await testServer({ featureGates: new Map([["APIResponseCompression", false]]) });
  for (const name of ["a", "b", "c"]) await create(t, name, GZIP_THRESHOLD_BYTES / 2);
  const plain = await identityBody(t, CM);
  assert(plain.length > GZIP_THRESHOLD_BYTES);
  const res = await rawGet(t, CM, "gzip");
  assertPlain(res);
  assertEquals(decoder.decode(res.body), plain);
});
