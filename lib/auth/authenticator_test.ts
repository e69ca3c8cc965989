import { assert, assertEquals } from "../../tests/assert.ts";
import { type Authenticator, tokenAuthenticator, unionAuthenticator } from "./authenticator.ts";

const withToken = (token: string) =>
  new Request("https://x/api", { headers: { Authorization: `Bearer ${token}` } });

Deno.test("static tokens: the user, in system:authenticated, shared and unchangeable", () => {
  const tokens = tokenAuthenticator(
    new Map([["t1", { username: "alice", uid: "1", groups: ["dev"] }]]),
  );
  const user = tokens.authenticate(withToken("t1"));
  assert(!(user instanceof Promise));
  assertEquals(user, { username: "alice", uid: "1", groups: ["dev", "system:authenticated"] });
  assert(user === tokens.authenticate(withToken("t1")), "each request built its own user");
  assert(Object.isFrozen(user) && Object.isFrozen(user!.groups));
  assertEquals(tokens.authenticate(withToken("other")), undefined);
  assertEquals(tokens.authenticate(new Request("https://x/api")), undefined);
});

Deno.test("union: the first authenticator that knows the credential decides, in order", async () => {
  const asked: string[] = [];
  const named = (name: string, knows: string, async: boolean): Authenticator => ({
    authenticate(req) {
      asked.push(name);
      const user = req.headers.get("Authorization") === `Bearer ${knows}`
        ? { username: name, groups: [] }
        : undefined;
      return async ? Promise.resolve(user) : user;
    },
  });
  const union = unionAuthenticator([
    named("certs", "c", false),
    named("jwt", "j", true),
    named("tokens", "t", false),
  ]);
  const direct = union.authenticate(withToken("c"));
  assert(!(direct instanceof Promise), "answered by a synchronous authenticator, yet a promise");
  assertEquals(direct?.username, "certs");
  assertEquals((await union.authenticate(withToken("t")))?.username, "tokens");
  assertEquals(asked, ["certs", "certs", "jwt", "tokens"]);
  assertEquals(await union.authenticate(withToken("nobody")), undefined);
});
