import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { CelCompileError, type CelEnvironmentName, type CelResultKind, compile } from "./mod.ts";

function rejects(
  expression: string,
  message: string,
  column?: number,
  { env = "claims", expect = "any" }: { env?: CelEnvironmentName; expect?: CelResultKind } = {},
) {
  try {
    compile(env, expression, { expect });
  } catch (err) {
    if (!(err instanceof CelCompileError)) throw err;
    strictEqual(err.message, message, expression);
    if (column !== undefined) strictEqual(err.position?.column, column, expression);
    return;
  }
  throw new Error(`${expression} compiled`);
}

function accepts(
  expression: string,
  expect: CelResultKind = "any",
  env: CelEnvironmentName = "claims",
) {
  compile(env, expression, { expect });
}

Deno.test("operators need an overload for their operand types", () => {
  rejects("1 + 'a'", "found no matching overload for '_+_' applied to '(int, string)'", 3);
  rejects("!'a'", "found no matching overload for '!_' applied to '(string)'", 1);
  rejects("[1] + 'a'", "found no matching overload for '_+_' applied to '(list(int), string)'");
  rejects("1 && true", "'_&&_' expects bool operands, got int", 1);
  // A dyn operand may be anything, so only its possible results count.
  accepts("claims.exp + 1 > 2", "bool");
  rejects(
    "claims.exp + 1",
    "expression must evaluate to a string, got int",
    1,
    { expect: "string" },
  );
  accepts("1 < 2.5 && 2u > 1", "bool");
});

Deno.test("the branches of ?: must agree unless one is dyn", () => {
  rejects(
    "claims.sub == 'a' ? 'a' : 2",
    "found no matching overload for '_?_:_' applied to '(bool, string, int)'",
  );
  accepts("claims.sub == 'a' ? 'a' : 'b'", "string");
  accepts("claims.sub == 'a' ? claims.x : 'b'", "string");
  accepts("has(claims.groups) ? claims.groups : null", "string|list<string>");
  accepts("claims.sub == 'a' ? 'a' : null", "string|list<string>");
  rejects("1 ? 'a' : 'b'", "'_?_:_' expects bool operands, got int", 1);
});

Deno.test("fields: objects declare theirs, maps have any, scalars none", () => {
  rejects("user.name", "undefined field 'name' of kubernetes.UserInfo", 5, { env: "user" });
  rejects("has(user.name)", "undefined field 'name' of kubernetes.UserInfo", 1, { env: "user" });
  accepts("user.extra.scopes.size() > 0", "bool", "user");
  rejects("'a'.length", "type 'string' does not support field selection", 4);
  rejects("user.username.x", "type 'string' does not support field selection", 14, { env: "user" });
});

Deno.test("indexing: lists by int, maps by their key type", () => {
  accepts("user.groups[0]", "string", "user");
  accepts("user.extra['k'][0]", "string", "user");
  rejects(
    "user.groups['a']",
    "found no matching overload for '_[_]' applied to '(list(string), string)'",
    undefined,
    {
      env: "user",
    },
  );
  rejects(
    "claims[1]",
    "found no matching overload for '_[_]' applied to '(map(string, dyn), int)'",
  );
  rejects("'abc'[0]", "found no matching overload for '_[_]' applied to '(string, int)'");
});

Deno.test("macros: ranges must be lists or maps, accumulators are typed", () => {
  rejects("1.all(x, true)", "expression of type 'int' cannot be the range of a comprehension");
  accepts("{'a': 1}.exists(k, k.startsWith('a'))", "bool");
  rejects(
    "{'a': 1}.all(k, k + 1 > 0)",
    "found no matching overload for '_+_' applied to '(string, int)'",
    19,
  );
  rejects(
    "['a'].map(x, x + 1)",
    "found no matching overload for '_+_' applied to '(string, int)'",
    16,
  );
  rejects(
    "[1, 2].map(x, x * 2)",
    "expression must evaluate to a string or a list of strings, got list(int)",
    1,
    { expect: "string|list<string>" },
  );
  accepts("['a', 'b'].filter(x, x != 'a')", "string|list<string>");
  accepts("[1, 2].map(x, x > 1, string(x))", "string|list<string>");
  rejects("[1].exists_one(x, x)", "'_?_:_' expects bool operands, got int", 19);
  // Mixed literals are list(dyn), checked when evaluated.
  accepts("['a', 1]", "string|list<string>");
});

Deno.test("functions: member or global, on the right receiver", () => {
  rejects("'a'.isSorted()", "found no matching overload for 'isSorted' applied to 'string.()'", 4);
  rejects(
    "isSorted([1])",
    "found no matching overload for 'isSorted' applied to '([list(int)])'".replace(
      "[list(int)]",
      "list(int)",
    ),
  );
  rejects(
    "[1, 2].indexOf('a')",
    "found no matching overload for 'indexOf' applied to 'list(int).(string)'",
  );
  accepts("size(claims.groups) == claims.groups.size()", "bool");
  accepts("strings.quote(claims.sub)", "string");
  accepts("type(claims.sub) == string && dyn(claims.exp) > 1", "bool");
});

Deno.test("literal arguments are checked at load: regexes, quantities, URLs", () => {
  rejects("claims.sub.matches('(')", "error parsing regexp: missing closing ): `(`", 20);
  rejects(
    "claims.sub.find('a(?=b)')",
    "error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
    17,
  );
  rejects(
    "quantity('200K').sign() > 0",
    "unable to parse quantity's suffix",
    10,
  );
  rejects(
    "url('../relative').getHost()",
    'URL parse error during conversion from string: parse "../relative": invalid URI for request',
    5,
  );
  // Patterns and values only known at run time are checked then.
  accepts("claims.sub.matches(claims.pattern)", "bool");
});

Deno.test("an authorizer is declared only when the use asks for one", () => {
  throws(
    () => compile("request", "authorizer.path('/x').check('get').allowed()", { expect: "bool" }),
    /undeclared reference to 'authorizer'/,
  );
  const compiled = compile("request", "authorizer.path('/x').check('get').allowed()", {
    expect: "bool",
    authorizer: true,
  });
  deepStrictEqual(compiled.environment, "request");
});
