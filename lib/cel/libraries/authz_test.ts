import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { type CelAuthorizer, CelEvaluationError, compile } from "../mod.ts";
import type { CelAuthorizerAttributes } from "./authz.ts";

/** A fake that records what it is asked and allows `get` only. */
function fakeAuthorizer(): CelAuthorizer & { asked: CelAuthorizerAttributes[] } {
  const asked: CelAuthorizerAttributes[] = [];
  return {
    asked,
    check(attributes) {
      asked.push(attributes);
      return attributes.verb === "get"
        ? { decision: "allow", reason: "get is fine" }
        : { decision: "deny", reason: `no ${attributes.verb}` };
    },
  };
}

function run(expression: string, authorizer: CelAuthorizer = fakeAuthorizer()) {
  return compile("request", expression, { expect: "any", authorizer: true })
    .evaluate({ request: { user: "jane" } }, { authorizer });
}

Deno.test("resource checks: group, resource, subresource, namespace, name, verb", () => {
  const authorizer = fakeAuthorizer();
  strictEqual(
    run(
      "authorizer.group('apps').resource('deployments').subresource('scale')" +
        ".namespace('prod').name('web').check('get').allowed()",
      authorizer,
    ),
    true,
  );
  strictEqual(
    run("authorizer.group('').resource('pods').check('delete').allowed()", authorizer),
    false,
  );
  deepStrictEqual(authorizer.asked, [
    {
      verb: "get",
      resourceRequest: true,
      apiGroup: "apps",
      resource: "deployments",
      subresource: "scale",
      namespace: "prod",
      name: "web",
    },
    {
      verb: "delete",
      resourceRequest: true,
      apiGroup: "",
      resource: "pods",
      subresource: "",
      namespace: "",
      name: "",
    },
  ]);
});

Deno.test("path checks, and the decision's reason", () => {
  const authorizer = fakeAuthorizer();
  strictEqual(run("authorizer.path('/healthz').check('get').allowed()", authorizer), true);
  strictEqual(run("authorizer.path('/metrics').check('post').reason()", authorizer), "no post");
  deepStrictEqual(authorizer.asked, [
    { verb: "get", resourceRequest: false, path: "/healthz" },
    { verb: "post", resourceRequest: false, path: "/metrics" },
  ]);
});

Deno.test("serviceAccount switches the subject", () => {
  const authorizer = fakeAuthorizer();
  run(
    "authorizer.serviceAccount('default', 'builder').path('/x').check('get').allowed()",
    authorizer,
  );
  deepStrictEqual(authorizer.asked[0].serviceAccount, { namespace: "default", name: "builder" });
  throws(
    () =>
      run("authorizer.serviceAccount('not@valid', 'builder').path('/x').check('get').allowed()"),
    /Invalid service account namespace/,
  );
  throws(
    () =>
      run("authorizer.serviceAccount('default', 'Not_Valid').path('/x').check('get').allowed()"),
    /Invalid service account name/,
  );
});

Deno.test("empty paths and resources are errors", () => {
  throws(() => run("authorizer.path(' ').check('get').allowed()"), /path must not be empty/);
  throws(
    () => run("authorizer.group('apps').resource('').check('get').allowed()"),
    /resource must not be empty/,
  );
});

Deno.test("an authorizer that throws gives an errored decision", () => {
  const failing: CelAuthorizer = {
    check() {
      throw new Error("webhook unreachable");
    },
  };
  strictEqual(run("authorizer.path('/x').check('get').errored()", failing), true);
  strictEqual(run("authorizer.path('/x').check('get').error()", failing), "webhook unreachable");
  strictEqual(run("authorizer.path('/x').check('get').allowed()", failing), false);
  strictEqual(run("authorizer.path('/x').check('get').errored()"), false);
  strictEqual(run("authorizer.path('/x').check('get').error()"), "");
});

Deno.test("the chain is typed: checks need a verb, decisions are not strings", () => {
  throws(
    () =>
      compile("request", "authorizer.group('apps').check('get')", {
        expect: "any",
        authorizer: true,
      }),
    /no matching overload for 'check' applied to 'kubernetes.authorization.GroupCheck.\(string\)'/,
  );
  throws(
    () =>
      compile("request", "authorizer.path('/x').check('get')", {
        expect: "bool",
        authorizer: true,
      }),
    /must evaluate to a boolean, got kubernetes.authorization.Decision/,
  );
  throws(
    () =>
      compile("request", "authorizer.path('/x').check('get').allowed()", {
        expect: "bool",
        authorizer: true,
      }).evaluate({ request: {} }),
    (err: Error) =>
      err instanceof CelEvaluationError &&
      err.message === "the expression uses the authorizer, but none was given",
  );
});
