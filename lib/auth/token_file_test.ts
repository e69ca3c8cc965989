import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../config/mod.ts";
import { loadTokenFile, parseTokenFile } from "./token_file.ts";

function fails(text: string, message: string) {
  assert.throws(() => parseTokenFile(text, "tokens.csv"), new ConfigError(message));
}

Deno.test("parseTokenFile reads token,user,uid,groups", () => {
  const tokens = parseTokenFile(
    [
      "# comment",
      "",
      "  # indented comment",
      'abc,alice,1001,"dev,ops"',
      "def,bob,1002",
      "ghi,carol,1003,single",
      ' "jkl" , "dan ""the man""" ,  1004 , " a , b ,, " ,extra,columns',
      "mno,eve,,",
    ].join("\r\n") + "\r\n",
    "tokens.csv",
  );
  assert.deepEqual(
    tokens,
    new Map([
      ["abc", { username: "alice", uid: "1001", groups: ["dev", "ops"] }],
      ["def", { username: "bob", uid: "1002", groups: [] }],
      ["ghi", { username: "carol", uid: "1003", groups: ["single"] }],
      ["jkl", { username: 'dan "the man"', uid: "1004", groups: ["a", "b"] }],
      ["mno", { username: "eve", uid: "", groups: [] }],
    ]),
  );
  assert.deepEqual(parseTokenFile("\uFEFFt,u,1", "x").get("t")?.username, "u");
  assert.equal(parseTokenFile("", "x").size, 0);
});

Deno.test("parseTokenFile errors name the file and line", () => {
  fails("a,b,1\n\nonly,two\n", "tokens.csv:3: expected at least 3 columns (token,user,uid)");
  fails("single\n", "tokens.csv:1: expected at least 3 columns (token,user,uid)");
  fails("a,u,1\nb,v,2\na,w,3\n", "tokens.csv:3: duplicate token (first on line 1)");
  fails(",u,1\n", "tokens.csv:1: empty token");
  fails("t,,1\n", "tokens.csv:1: empty user name");
  fails('t,u,1,"dev,ops\n', "tokens.csv:1: unterminated quoted field");
  fails('t,u,1,"dev"x\n', 'tokens.csv:1: unexpected "x" after a quoted field');
  fails('t,u"x,1\n', 'tokens.csv:1: bare " in an unquoted field');
  fails('"t t",u,1\n', "tokens.csv:1: token contains white space");
});

Deno.test("loadTokenFile reads a file and names it in errors", async () => {
  const sample = join(
    dirname(fileURLToPath(import.meta.url)),
    "..",
    "..",
    "testdata",
    "config",
    "tokens.csv",
  );
  const tokens = await loadTokenFile(sample);
  assert.deepEqual(tokens.get("dev-token-0123456789"), {
    username: "alice",
    uid: "1001",
    groups: ["dev", "ops"],
  });
  assert.equal(tokens.size, 3);
  await assert.rejects(
    () => loadTokenFile("/nonexistent/tokens.csv"),
    new ConfigError(
      '--token-auth-file: cannot read "/nonexistent/tokens.csv": No such file or directory',
    ),
  );
});
