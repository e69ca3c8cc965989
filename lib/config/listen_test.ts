/** {@link checkPortFree} and {@link describeListenError}: listen errors name the flag. */

import assert from "node:assert/strict";
import { ConfigError } from "./config_error.ts";
import { checkPortFree, describeListenError } from "./listen.ts";

Deno.test("checkPortFree and describeListenError name the flag", () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = listener.addr.port;
    assert.throws(() => checkPortFree("127.0.0.1", port), (err: unknown) => {
      assert(err instanceof ConfigError);
      assert.equal(err.message, `--secure-port: 127.0.0.1:${port} is already in use`);
      return true;
    });
  } finally {
    listener.close();
  }
  checkPortFree("127.0.0.1", 0);
  assert.equal(
    describeListenError(new Deno.errors.AddrInUse("x"), "::1", 6443),
    "--secure-port: [::1]:6443 is already in use",
  );
  assert.equal(
    describeListenError(new Deno.errors.AddrNotAvailable("x"), "10.9.9.9", 6443),
    '--bind-address: "10.9.9.9" is not an address of this machine',
  );
  assert.equal(
    describeListenError(new Deno.errors.PermissionDenied("x"), "0.0.0.0", 443),
    "--secure-port: permission denied to listen on 0.0.0.0:443",
  );
});

Deno.test("Deno.serve's own listen error maps the same way", () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = listener.addr.port;
    let message = "";
    try {
      Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, () => new Response());
    } catch (err) {
      message = describeListenError(err, "127.0.0.1", port);
    }
    assert.equal(message, `--secure-port: 127.0.0.1:${port} is already in use`);
  } finally {
    listener.close();
  }
});
