import { gunzipSync } from "node:zlib";
import { assert, assertEquals } from "../../../tests/assert.ts";
import type { Handler, RequestContext } from "../context.ts";
import { requestInfoOf } from "../request_info.ts";
import {
  acceptsGzip,
  compressionFilter,
  GZIP_THRESHOLD_BYTES,
  isCompressibleRequest,
} from "./compression.ts";

Deno.test("acceptsGzip reads Accept-Encoding as RFC 9110 does", () => {
  const cases: [string | null, boolean][] = [
    [null, false],
    ["", false],
    ["identity", false],
    ["br, deflate", false],
    ["gzip", true],
    ["GZip", true],
    ["x-gzip", true],
    ["deflate, gzip", true],
    [" gzip ; q=0.5 ", true],
    ["gzip;Q=1.000", true],
    ["gzip;q=0.001", true],
    ["gzip;q=0", false],
    ["gzip; q=0.000", false],
    ["*", true],
    ["*;q=0.1", true],
    ["*;q=0", false],
    ["br, *;q=0", false],
    // An explicit entry beats the wildcard, either way.
    ["gzip;q=0, *", false],
    ["gzip, *;q=0", true],
    // Malformed weights are refusals.
    ["gzip;q=abc", false],
    ["gzip;q=2", false],
    ["gzip;q=0.1234", false],
    ["gzip;q=", false],
    // Other parameters do not matter.
    ["gzip;level=9", true],
    ["gzip;q=0, gzip;q=0.8", true],
  ];
  for (const [header, want] of cases) {
    assertEquals(acceptsGzip(header), want, `Accept-Encoding: ${header}`);
  }
});

const CM = "https://h/api/v1/namespaces/default/configmaps";

function contextOf(url: string, headers: Record<string, string> = {}, method = "GET") {
  const req = new Request(url, { method, headers });
  const parsed = new URL(url);
  const ctx: RequestContext = {
    req,
    url: parsed,
    info: requestInfoOf(method, parsed),
    warnings: [],
    signal: new AbortController().signal,
  };
  return ctx;
}

const GZIP = { "Accept-Encoding": "gzip" };

Deno.test("isCompressibleRequest: get, list, discovery and OpenAPI GETs that accept gzip", () => {
  const cases: [string, Record<string, string>, string, boolean][] = [
    [CM, GZIP, "GET", true],
    [`${CM}/a`, GZIP, "GET", true],
    [`${CM}/a`, {}, "GET", false],
    [`${CM}/a`, { "Accept-Encoding": "gzip;q=0" }, "GET", false],
    [`${CM}?watch=1`, GZIP, "GET", false],
    ["https://h/api/v1/watch/namespaces/default/configmaps", GZIP, "GET", false],
    [`${CM}/a`, GZIP, "HEAD", false],
    [CM, GZIP, "POST", false],
    [`${CM}/a`, GZIP, "PUT", false],
    [`${CM}/a`, GZIP, "DELETE", false],
    ["https://h/apis", GZIP, "GET", true],
    ["https://h/api/v1", GZIP, "GET", true],
    ["https://h/openapi/v3/api/v1", GZIP, "GET", true],
    ["https://h/openapi/v2", GZIP, "GET", true],
    ["https://h/version", GZIP, "GET", false],
    ["https://h/readyz", GZIP, "GET", false],
    ["https://h/apisx", GZIP, "GET", false],
  ];
  for (const [url, headers, method, want] of cases) {
    const ctx = contextOf(url, headers, method);
    assertEquals(isCompressibleRequest(ctx), want, `${method} ${url} ${JSON.stringify(headers)}`);
  }
});

/** Runs the filter over a handler that answers `res`. */
function run(enabled: boolean, ctx: RequestContext, res: () => Response): Promise<Response> {
  const handler: Handler = () => Promise.resolve(res());
  return compressionFilter(enabled)(ctx, handler);
}

function json(size: number, init: ResponseInit = {}): Response {
  const body = `{"items":"${"x".repeat(size - 12)}"}`;
  assertEquals(body.length, size);
  return new Response(body, { headers: { "Content-Type": "application/json" }, ...init });
}

Deno.test("compressionFilter gzips 200 bodies over the threshold only", async () => {
  const over = await run(true, contextOf(CM, GZIP), () => json(GZIP_THRESHOLD_BYTES + 1));
  assertEquals(over.status, 200);
  assertEquals(over.headers.get("Content-Encoding"), "gzip");
  assertEquals(over.headers.get("Vary"), "Accept-Encoding");
  assertEquals(over.headers.get("Content-Type"), "application/json");
  assertEquals(over.headers.get("Content-Length"), null);
  const gz = await over.bytes();
  assert(gz.length < GZIP_THRESHOLD_BYTES / 10, `compressed to ${gz.length} bytes`);
  assertEquals(
    new TextDecoder().decode(gunzipSync(gz)),
    await json(GZIP_THRESHOLD_BYTES + 1).text(),
  );

  const at = await run(true, contextOf(CM, GZIP), () => json(GZIP_THRESHOLD_BYTES));
  assertEquals(at.headers.get("Content-Encoding"), null);
  assertEquals(at.headers.get("Vary"), null);
  assertEquals(at.headers.get("Content-Type"), "application/json");
  assertEquals(await at.text(), await json(GZIP_THRESHOLD_BYTES).text());
});

Deno.test("compressionFilter leaves other responses alone", async () => {
  const big = GZIP_THRESHOLD_BYTES * 2;
  const untouched: [string, boolean, RequestContext, () => Response][] = [
    ["gate off", false, contextOf(CM, GZIP), () => json(big)],
    ["no Accept-Encoding", true, contextOf(CM), () => json(big)],
    ["watch", true, contextOf(`${CM}?watch=true`, GZIP), () => json(big)],
    ["404", true, contextOf(`${CM}/a`, GZIP), () => json(big, { status: 404 })],
    ["201", true, contextOf(CM, GZIP, "POST"), () => json(big, { status: 201 })],
    [
      "already encoded",
      true,
      contextOf(CM, GZIP),
      () => json(big, { headers: { "Content-Encoding": "br" } }),
    ],
  ];
  for (const [name, enabled, ctx, res] of untouched) {
    const want = res();
    const got = await run(enabled, ctx, () => want);
    assert(got === want, `${name}: the handler's own response`);
  }
});

Deno.test("compressionFilter weakens a strong ETag it compresses", async () => {
  const ctx = contextOf("https://h/openapi/v3/api/v1", GZIP);
  const res = await run(
    true,
    ctx,
    () => json(GZIP_THRESHOLD_BYTES + 1, { headers: { ETag: '"AB"' } }),
  );
  assertEquals(res.headers.get("Content-Encoding"), "gzip");
  assertEquals(res.headers.get("ETag"), 'W/"AB"');
  await res.body?.cancel();
});
