import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { CelCompileError, CelEvaluationError, compile } from "../mod.ts";

const run = (expression: string, claims: object = {}) =>
  compile("claims", expression, { expect: "any" }).evaluate({ claims });

Deno.test("url() and isURL(): an absolute URI or an absolute path", () => {
  for (
    const good of [
      "https://user:pass@example.com:80/path?query=val#fragment",
      "/absolute-path",
      "https://[::1]:80/",
      "mailto:someone@example.com",
    ]
  ) {
    strictEqual(run("isURL(claims.u)", { u: good }), true, good);
  }
  for (
    const bad of ["https://a:b:c/", "../relative-path", "", "https://exa mple.com/", "http://[::1/"]
  ) {
    strictEqual(run("isURL(claims.u)", { u: bad }), false, bad);
  }
  throws(() => compile("claims", "url('https://a:b:c/')", { expect: "any" }), CelCompileError);
  throws(
    () => run("url(claims.u).getHost()", { u: "../relative-path" }),
    (err: Error) =>
      err instanceof CelEvaluationError &&
      err.message.startsWith(
        'URL parse error during conversion from string: parse "../relative-path": invalid URI for request',
      ),
  );
});

Deno.test("getScheme, getHost, getHostname and getPort", () => {
  strictEqual(run("url('/path').getScheme()"), "");
  strictEqual(run("url('HTTPS://example.com/').getScheme()"), "https");
  strictEqual(run("url('https://example.com:80/').getHost()"), "example.com:80");
  strictEqual(run("url('https://example.com/').getHost()"), "example.com");
  strictEqual(run("url('https://[::1]:80/').getHost()"), "[::1]:80");
  strictEqual(run("url('https://[::1]/').getHost()"), "[::1]");
  strictEqual(run("url('/path').getHost()"), "");
  strictEqual(run("url('https://example.com:80/').getHostname()"), "example.com");
  strictEqual(run("url('https://127.0.0.1:80/').getHostname()"), "127.0.0.1");
  strictEqual(run("url('https://[::1]:80/').getHostname()"), "::1");
  strictEqual(run("url('/path').getHostname()"), "");
  strictEqual(run("url('https://example.com:80/').getPort()"), "80");
  strictEqual(run("url('https://example.com/').getPort()"), "");
  strictEqual(run("url('/path').getPort()"), "");
});

Deno.test("getEscapedPath: as written when valid, else Go's escaping", () => {
  strictEqual(run("url('https://example.com/path').getEscapedPath()"), "/path");
  strictEqual(
    run("url('https://example.com/path with spaces/').getEscapedPath()"),
    "/path%20with%20spaces/",
  );
  strictEqual(run("url('https://example.com').getEscapedPath()"), "");
  strictEqual(run("url('https://example.com/a%2Fb').getEscapedPath()"), "/a%2Fb");
  strictEqual(run("url('https://example.com/ü').getEscapedPath()"), "/%C3%BC");
  throws(
    () => compile("claims", "url('https://example.com/%zz')", { expect: "any" }),
    /invalid URL escape/,
  );
});

Deno.test("getQuery: each key's values, unescaped", () => {
  deepStrictEqual(run("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()"), {
    k1: ["a"],
    k2: ["b", "c"],
  });
  deepStrictEqual(
    run("url('https://example.com/path?key with spaces=value with spaces').getQuery()"),
    { "key with spaces": ["value with spaces"] },
  );
  deepStrictEqual(run("url('https://example.com/path?a=1+2&b=%41&c').getQuery()"), {
    a: ["1 2"],
    b: ["A"],
    c: [""],
  });
  deepStrictEqual(run("url('https://example.com/path?').getQuery()"), {});
  deepStrictEqual(run("url('https://example.com/path').getQuery()"), {});
  // Pairs with a semicolon or a bad escape are skipped, as Go does.
  deepStrictEqual(run("url('/p?a=1;b=2&c=%zz&d=4').getQuery()"), { d: ["4"] });
  strictEqual(run("url('/p?x=1&x=2').getQuery().x.size()"), 2n);
});
