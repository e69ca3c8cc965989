import { assertEquals } from "../../tests/assert.ts";
import { fieldErrorMessage } from "../api/errors.ts";
import type { KubeObject } from "../registry/definition.ts";
import {
  defaultBinding,
  validateBinding,
  validateBindingUpdate,
  validateRole,
} from "./validation.ts";

const messages = (errors: ReturnType<typeof validateRole>) => errors.map(fieldErrorMessage);

Deno.test("validateRole: kube's rule checks", () => {
  assertEquals(
    messages(
      validateRole({ rules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }] }, true),
    ),
    [],
  );
  assertEquals(messages(validateRole({ rules: [{}] }, true)), [
    "rules[0].verbs: Required value: verbs must contain at least one value",
    "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
    "rules[0].resources: Required value: resource rules must supply at least one resource",
  ]);
  const url = { verbs: ["get"], nonResourceURLs: ["/x"] };
  assertEquals(messages(validateRole({ rules: [url] }, false)), []);
  assertEquals(messages(validateRole({ rules: [url] }, true)), [
    'rules[0].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs',
  ]);
  assertEquals(messages(validateRole({ rules: [{ ...url, resources: ["pods"] }] }, false)), [
    'rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs',
  ]);
});

Deno.test("validateRole: a ClusterRole's aggregationRule needs valid selectors", () => {
  assertEquals(messages(validateRole({ aggregationRule: {} }, false)), [
    "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
  ]);
  assertEquals(
    validateRole(
      { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: "b" } }] } },
      false,
    ),
    [],
  );
  const bad = validateRole({
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "bad key!": "b" } }] },
  }, false);
  assertEquals(bad.map((e) => e.field), ["aggregationRule.clusterRoleSelectors[0]"]);
});

const binding = (more: KubeObject = {}): KubeObject => ({
  roleRef: { apiGroup: "rbac.authorization.platform.io", kind: "Role", name: "r" },
  subjects: [{ kind: "User", apiGroup: "rbac.authorization.platform.io", name: "bob" }],
  ...more,
});

Deno.test("validateBinding: roleRef and subjects in kube's words; both group spellings", () => {
  assertEquals(validateBinding(binding(), true), []);
  assertEquals(
    validateBinding(
      binding({
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "g" }],
      }),
      true,
    ),
    [],
  );
  assertEquals(messages(validateBinding(binding(), false)), [
    'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
  ]);
  assertEquals(
    messages(
      validateBinding(binding({ roleRef: { apiGroup: "x", kind: "Thing", name: "a/b" } }), true),
    ),
    [
      'roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.platform.io", "rbac.authorization.k8s.io"',
      'roleRef.kind: Unsupported value: "Thing": supported values: "Role", "ClusterRole"',
      "roleRef.name: Invalid value: \"a/b\": may not contain '/'",
    ],
  );
  assertEquals(
    messages(
      validateBinding(
        binding({
          subjects: [
            { kind: "ServiceAccount", name: "Robot", apiGroup: "x" },
            { kind: "User", name: "" },
            { kind: "Robot", name: "r" },
          ],
        }),
        false,
      ).filter((e) => e.field.startsWith("subjects")),
    ),
    [
      "subjects[0].name: Invalid value: \"Robot\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'subjects[0].apiGroup: Unsupported value: "x": supported values: ""',
      "subjects[0].namespace: Required value",
      "subjects[1].name: Required value",
      'subjects[1].apiGroup: Unsupported value: "": supported values: "rbac.authorization.platform.io", "rbac.authorization.k8s.io"',
      'subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ],
  );
});

Deno.test("defaultBinding fills the groups kube defaults", () => {
  const b: KubeObject = {
    roleRef: { kind: "Role", name: "r" },
    subjects: [{ kind: "User", name: "u" }, { kind: "ServiceAccount", name: "s" }],
  };
  defaultBinding(b);
  assertEquals(b.roleRef.apiGroup, "rbac.authorization.platform.io");
  assertEquals(b.subjects[0].apiGroup, "rbac.authorization.platform.io");
  assertEquals(b.subjects[1].apiGroup, undefined);
});

Deno.test("validateBindingUpdate: the roleRef cannot change, but may be respelled", () => {
  const old = binding();
  assertEquals(validateBindingUpdate(binding(), old), []);
  assertEquals(
    validateBindingUpdate(
      binding({ roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "r" } }),
      old,
    ),
    [],
  );
  assertEquals(
    messages(validateBindingUpdate(
      binding({ roleRef: { apiGroup: "rbac.authorization.platform.io", kind: "Role", name: "s" } }),
      old,
    )),
    [
      'roleRef: Invalid value: {"apiGroup":"rbac.authorization.platform.io","kind":"Role","name":"s"}: cannot change roleRef',
    ],
  );
});
