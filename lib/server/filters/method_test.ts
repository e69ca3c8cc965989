import { assertEquals } from "../../../tests/assert.ts";
import { StatusError } from "../../api/errors.ts";
import type { RequestContext } from "../context.ts";
import { requestInfoOf } from "../request_info.ts";
import { methodFilter } from "./method.ts";

function ctxFor(method: string): RequestContext {
  const url = new URL("https://127.0.0.1/api/v1/namespaces/d/secrets/s");
  return {
    req: { method } as Request,
    url,
    info: requestInfoOf(method, url),
    warnings: [],
    signal: new AbortController().signal,
  };
}

Deno.test("method filter: kube's methods pass; any other is 405 before the next filter", async () => {
  const next = () => Promise.resolve(new Response("next"));
  for (const method of ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
    assertEquals(await (await methodFilter()(ctxFor(method), next)).text(), "next", method);
  }
  for (const method of ["LIST", "DELETECOLLECTION", "CREATE", "WATCH", "get", "TRACE"]) {
    let reached = false;
    let thrown: unknown;
    try {
      await methodFilter()(ctxFor(method), () => {
        reached = true;
        return next();
      });
    } catch (err) {
      thrown = err;
    }
    assertEquals(thrown instanceof StatusError && thrown.code, 405, method);
    assertEquals(reached, false, method);
  }
});
