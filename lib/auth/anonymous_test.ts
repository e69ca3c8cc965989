import assert from "node:assert/strict";
import { ConfigError } from "../config/mod.ts";
import { anonymousAllowed, anonymousUser, checkAnonymousFlagConflict } from "./anonymous.ts";

Deno.test("anonymousAllowed: off without config or when disabled", () => {
  assert.deepEqual(anonymousAllowed(undefined, "/livez"), false);
  assert.deepEqual(anonymousAllowed({ enabled: false, conditions: [] }, "/livez"), false);
});

Deno.test("anonymousAllowed: every path without conditions, exact paths with them", () => {
  assert.deepEqual(anonymousAllowed({ enabled: true, conditions: [] }, "/api/v1/pods"), true);
  const cfg = { enabled: true, conditions: [{ path: "/livez" }, { path: "/readyz" }] };
  assert.deepEqual(anonymousAllowed(cfg, "/livez"), true);
  assert.deepEqual(anonymousAllowed(cfg, "/readyz"), true);
  assert.deepEqual(anonymousAllowed(cfg, "/livez/etcd"), false);
  assert.deepEqual(anonymousAllowed(cfg, "/healthz"), false);
});

Deno.test("anonymousUser is system:anonymous in system:unauthenticated", () => {
  assert.deepEqual(anonymousUser(), {
    username: "system:anonymous",
    groups: ["system:unauthenticated"],
  });
});

Deno.test("checkAnonymousFlagConflict: the file's anonymous and --anonymous-auth exclude", () => {
  const withAnonymous = { jwt: [], anonymous: { enabled: true, conditions: [] } };
  assert.throws(
    () => checkAnonymousFlagConflict(withAnonymous, { file: "auth.yaml", flagSet: true }),
    new ConfigError(
      "auth.yaml: anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous " +
        "field is configured in authentication configuration file",
    ),
  );
  checkAnonymousFlagConflict(withAnonymous, { file: "auth.yaml", flagSet: false });
  checkAnonymousFlagConflict({ jwt: [] }, { file: "auth.yaml", flagSet: true });
});
