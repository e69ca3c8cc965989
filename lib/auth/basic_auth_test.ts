/** The `--basic-auth-file` password file and its authenticator. */

import { assertEquals } from "../../tests/assert.ts";
import { ConfigError } from "../config/mod.ts";
import { basicAuthenticator, parseBasicAuthFile } from "./basic_auth.ts";

const basic = (user: string, password: string) =>
  new Request("https://x/", { headers: { Authorization: `Basic ${btoa(`${user}:${password}`)}` } });

Deno.test("basic auth: a user of the file signs in with its password only", () => {
  const users = parseBasicAuthFile(
    '# comment\ns3cret,alice,1001,"dev,ops"\nother,bob,1002\n',
    "passwords.csv",
  );
  const authn = basicAuthenticator(users);
  assertEquals(authn.authenticate(basic("alice", "s3cret")), {
    username: "alice",
    uid: "1001",
    groups: ["dev", "ops", "system:authenticated"],
  });
  assertEquals(authn.authenticate(basic("alice", "other")), undefined);
  assertEquals(authn.authenticate(basic("carol", "s3cret")), undefined);
  assertEquals(
    authn.authenticate(new Request("https://x/", { headers: { Authorization: "Bearer t" } })),
    undefined,
  );
});

Deno.test("basic auth: a bad line is a ConfigError naming the file and line", () => {
  const cases: [string, string][] = [
    ["p,alice\n", "passwords.csv:1: expected at least 3 columns (password,user,uid)"],
    ["p,alice,1\nq,alice,2\n", 'passwords.csv:2: duplicate user "alice" (first on line 1)'],
    [",alice,1\n", "passwords.csv:1: empty password"],
  ];
  for (const [text, message] of cases) {
    let err: unknown;
    try {
      parseBasicAuthFile(text, "passwords.csv");
    } catch (e) {
      err = e;
    }
    assertEquals(err instanceof ConfigError, true);
    assertEquals((err as Error).message, message);
  }
});
