/**
 * Extracts the protobuf message definitions of the built-in kinds from Kubernetes'
 * `generated.proto` files into `lib/codec/protobuf/descriptors.json`, the data the protobuf
 * codec (`lib/codec/protobuf/`) encodes and decodes with.
 *
 *     deno task protos [proto-root] [output-file]
 *
 * `proto-root` defaults to `../shared/conformance/k8s-proto` (the checkout beside this repo);
 * `output-file` defaults to `lib/codec/protobuf/descriptors.json`. The `.proto` files it parses
 * are also checked in under `testdata/k8s-proto` (`deno task protos testdata/k8s-proto` gives the
 * same output); `lib/codec/protobuf/protobuf_test.ts` checks the committed descriptors against
 * that copy, so the tests never need `../shared`.
 *
 * What it does:
 * - parses the needed `generated.proto` files with protobufjs (parsing only: the codec has its
 *   own encoder, because kube's byte layout writes empty non-pointer fields and sorts map keys,
 *   which protobufjs' encoder does not do);
 * - keeps only the messages reachable from the served kinds ({@link ROOTS});
 * - records for every singular field whether it is always written (a non-pointer Go field) or
 *   only when set (a pointer Go field, listed in {@link WRITTEN_WHEN_SET}): the .proto files do
 *   not carry this, and the round-trip fixtures cannot tell either since every field is set there;
 * - records the JSON name of fields whose Go json tag differs from the proto name
 *   ({@link JSON_NAMES}, e.g. JSONSchemaProps' `$ref` and `x-kubernetes-*`), and the JSON form of
 *   messages that are not an object of their fields ({@link FORMS}: times, raw JSON, string
 *   lists, the JSONSchemaPropsOr… unions), and the message fields that are Go structs embedded
 *   inline ({@link INLINE}: admissionregistration's Rule in RuleWithOperations);
 * - maps each served apiVersion/kind (groups renamed from `k8s.io` to `platform.io`) to its
 *   message;
 * - writes stable, sorted JSON so reruns produce identical bytes.
 */

import protobuf from "protobufjs";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const PROTO_FILES = [
  "k8s.io/apimachinery/pkg/runtime/schema/generated.proto",
  "k8s.io/apimachinery/pkg/runtime/generated.proto",
  "k8s.io/apimachinery/pkg/util/intstr/generated.proto",
  "k8s.io/apimachinery/pkg/api/resource/generated.proto",
  "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
  "k8s.io/api/core/v1/generated.proto",
  "k8s.io/api/coordination/v1/generated.proto",
  "k8s.io/api/events/v1/generated.proto",
  "k8s.io/api/certificates/v1/generated.proto",
  "k8s.io/api/authentication/v1/generated.proto",
  "k8s.io/api/authorization/v1/generated.proto",
  "k8s.io/api/rbac/v1/generated.proto",
  "k8s.io/api/admissionregistration/v1/generated.proto",
  "k8s.io/api/autoscaling/v1/generated.proto",
  "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/generated.proto",
];

const META = "k8s.io.apimachinery.pkg.apis.meta.v1";
const RUNTIME = "k8s.io.apimachinery.pkg.runtime";
const CORE = "k8s.io.api.core.v1";
const AUTHN = "k8s.io.api.authentication.v1";
const AUTHZ = "k8s.io.api.authorization.v1";
const APIEXT = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1";
const ADMREG = "k8s.io.api.admissionregistration.v1";

/**
 * Served group versions and their kinds. Each kind also gets its `…List`, except in groups with
 * `lists: false`: the review kinds are only created (a request answered in place) and have no
 * List message.
 */
const SERVED: Record<string, { pkg: string; kinds: string[]; lists?: false }> = {
  "v1": {
    pkg: CORE,
    kinds: ["Namespace", "ConfigMap", "Secret", "ServiceAccount", "Service", "Event"],
  },
  "coordination.platform.io/v1": { pkg: "k8s.io.api.coordination.v1", kinds: ["Lease"] },
  "events.platform.io/v1": { pkg: "k8s.io.api.events.v1", kinds: ["Event"] },
  "certificates.platform.io/v1": {
    pkg: "k8s.io.api.certificates.v1",
    kinds: ["CertificateSigningRequest"],
  },
  "apiextensions.platform.io/v1": { pkg: APIEXT, kinds: ["CustomResourceDefinition"] },
  "rbac.authorization.platform.io/v1": {
    pkg: "k8s.io.api.rbac.v1",
    kinds: ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"],
  },
  "admissionregistration.platform.io/v1": {
    pkg: ADMREG,
    kinds: [
      "MutatingWebhookConfiguration",
      "ValidatingWebhookConfiguration",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
    ],
  },
  "authentication.platform.io/v1": {
    pkg: AUTHN,
    kinds: ["TokenReview", "TokenRequest", "SelfSubjectReview"],
    lists: false,
  },
  // The `scale` subresource of custom resources answers with autoscaling/v1 Scale.
  "autoscaling/v1": { pkg: "k8s.io.api.autoscaling.v1", kinds: ["Scale"], lists: false },
  // kubectl 1.27's `auth whoami` asks for v1beta1. Its SelfSubjectReview has v1's fields and
  // numbers (metadata 1, status 2; status.userInfo 1, a v1 UserInfo), so v1's messages encode it.
  "authentication.platform.io/v1beta1": { pkg: AUTHN, kinds: ["SelfSubjectReview"], lists: false },
  "authorization.platform.io/v1": {
    pkg: AUTHZ,
    kinds: [
      "SubjectAccessReview",
      "SelfSubjectAccessReview",
      "LocalSubjectAccessReview",
      "SelfSubjectRulesReview",
    ],
    lists: false,
  },
};

/** meta/v1 kinds that every served group version (and `meta.platform.io/v1`) carries. */
const META_KINDS = ["Status", "WatchEvent", "DeleteOptions"];

/** Messages besides the kinds that the codec needs (the envelope). */
const ROOTS = [`${RUNTIME}.Unknown`];

/**
 * Singular fields that are pointers in the Go types (`*int64`, `*bool`, `*string`, `*Time`,
 * optional structs): gogo writes them only when set. Every other singular field is a value in
 * Go and is written even when empty. Taken from the Go types of k8s.io/api and apimachinery;
 * `[]byte` fields are listed too, since gogo writes them only when non-nil.
 */
const WRITTEN_WHEN_SET: Record<string, string[]> = {
  [`${META}.ObjectMeta`]: ["deletionTimestamp", "deletionGracePeriodSeconds"],
  [`${META}.OwnerReference`]: ["controller", "blockOwnerDeletion"],
  [`${META}.ManagedFieldsEntry`]: ["time", "fieldsV1"],
  [`${META}.FieldsV1`]: ["Raw"],
  [`${META}.ListMeta`]: ["remainingItemCount", "shardInfo"],
  [`${META}.Status`]: ["details"],
  [`${META}.DeleteOptions`]: [
    "gracePeriodSeconds",
    "preconditions",
    "orphanDependents",
    "propagationPolicy",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
  ],
  [`${META}.Preconditions`]: ["uid", "resourceVersion"],
  [`${RUNTIME}.RawExtension`]: ["raw"],
  [`${RUNTIME}.Unknown`]: ["raw"],
  [`${CORE}.ConfigMap`]: ["immutable"],
  [`${CORE}.Secret`]: ["immutable"],
  [`${CORE}.ServiceAccount`]: ["automountServiceAccountToken"],
  [`${CORE}.ServiceSpec`]: [
    "sessionAffinityConfig",
    "ipFamilyPolicy",
    "allocateLoadBalancerNodePorts",
    "loadBalancerClass",
    "internalTrafficPolicy",
    "trafficDistribution",
  ],
  [`${CORE}.ServicePort`]: ["appProtocol"],
  [`${CORE}.SessionAffinityConfig`]: ["clientIP"],
  [`${CORE}.ClientIPConfig`]: ["timeoutSeconds"],
  [`${CORE}.LoadBalancerIngress`]: ["ipMode"],
  [`${CORE}.PortStatus`]: ["error"],
  [`${CORE}.Event`]: ["series", "related"],
  "k8s.io.api.coordination.v1.LeaseSpec": [
    "holderIdentity",
    "leaseDurationSeconds",
    "acquireTime",
    "renewTime",
    "leaseTransitions",
    "strategy",
    "preferredHolder",
  ],
  "k8s.io.api.events.v1.Event": ["series", "related"],
  "k8s.io.api.certificates.v1.CertificateSigningRequestSpec": ["request", "expirationSeconds"],
  "k8s.io.api.certificates.v1.CertificateSigningRequestStatus": ["certificate"],
  // authentication/v1: TokenReviewStatus and UserInfo are all value fields
  [`${AUTHN}.TokenRequestSpec`]: ["expirationSeconds", "boundObjectRef"],
  // authorization/v1: SubjectAccessReviewStatus and SubjectRulesReviewStatus are all values
  [`${AUTHZ}.SubjectAccessReviewSpec`]: ["resourceAttributes", "nonResourceAttributes"],
  [`${AUTHZ}.SelfSubjectAccessReviewSpec`]: ["resourceAttributes", "nonResourceAttributes"],
  [`${AUTHZ}.ResourceAttributes`]: ["fieldSelector", "labelSelector"],
  // rbac/v1: only ClusterRole.aggregationRule is a pointer
  "k8s.io.api.rbac.v1.ClusterRole": ["aggregationRule"],
  // apiextensions/v1 (types.go, types_jsonschema.go)
  [`${APIEXT}.CustomResourceDefinitionSpec`]: ["conversion"],
  [`${APIEXT}.CustomResourceConversion`]: ["webhook"],
  [`${APIEXT}.WebhookConversion`]: ["clientConfig"],
  [`${APIEXT}.WebhookClientConfig`]: ["url", "service", "caBundle"],
  [`${APIEXT}.ServiceReference`]: ["path", "port"],
  [`${APIEXT}.CustomResourceDefinitionVersion`]: ["deprecationWarning", "schema", "subresources"],
  [`${APIEXT}.CustomResourceValidation`]: ["openAPIV3Schema"],
  [`${APIEXT}.CustomResourceSubresources`]: ["status", "scale"],
  [`${APIEXT}.CustomResourceSubresourceScale`]: ["labelSelectorPath"],
  [`${APIEXT}.JSONSchemaProps`]: [
    "ref",
    "default",
    "maximum",
    "minimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "multipleOf",
    "maxProperties",
    "minProperties",
    "items",
    "not",
    "additionalProperties",
    "additionalItems",
    "externalDocs",
    "example",
    "xKubernetesPreserveUnknownFields",
    "xKubernetesListType",
    "xKubernetesMapType",
  ],
  [`${APIEXT}.JSONSchemaPropsOrArray`]: ["schema"],
  [`${APIEXT}.JSONSchemaPropsOrBool`]: ["schema"],
  [`${APIEXT}.JSONSchemaPropsOrStringArray`]: ["schema"],
  [`${APIEXT}.JSON`]: ["raw"],
  [`${APIEXT}.ValidationRule`]: ["reason", "optionalOldSelf"],
  // admissionregistration/v1 (types.go)
  [`${ADMREG}.Rule`]: ["scope"],
  [`${ADMREG}.ValidatingWebhook`]: [
    "failurePolicy",
    "matchPolicy",
    "namespaceSelector",
    "objectSelector",
    "sideEffects",
    "timeoutSeconds",
  ],
  [`${ADMREG}.MutatingWebhook`]: [
    "failurePolicy",
    "matchPolicy",
    "namespaceSelector",
    "objectSelector",
    "sideEffects",
    "timeoutSeconds",
    "reinvocationPolicy",
  ],
  [`${ADMREG}.WebhookClientConfig`]: ["url", "service", "caBundle"],
  [`${ADMREG}.ServiceReference`]: ["path", "port"],
  [`${ADMREG}.ValidatingAdmissionPolicySpec`]: ["paramKind", "matchConstraints", "failurePolicy"],
  [`${ADMREG}.ValidatingAdmissionPolicyStatus`]: ["typeChecking"],
  [`${ADMREG}.Validation`]: ["reason"],
  [`${ADMREG}.ValidatingAdmissionPolicyBindingSpec`]: ["paramRef", "matchResources"],
  [`${ADMREG}.ParamRef`]: ["selector", "parameterNotFoundAction"],
  [`${ADMREG}.MatchResources`]: ["namespaceSelector", "objectSelector", "matchPolicy"],
};

/**
 * Fields whose JSON name is not their proto name (the Go json tag differs from the protobuf
 * name): message -> proto name -> JSON name. The codec reads and writes the JSON name.
 */
const JSON_NAMES: Record<string, Record<string, string>> = {
  [`${AUTHN}.BoundObjectReference`]: { uID: "uid" },
  [`${ADMREG}.MutatingWebhookConfiguration`]: { Webhooks: "webhooks" },
  [`${ADMREG}.ValidatingWebhookConfiguration`]: { Webhooks: "webhooks" },
  [`${ADMREG}.Validation`]: { Expression: "expression" },
  [`${ADMREG}.Variable`]: { Name: "name", Expression: "expression" },
  [`${APIEXT}.JSONSchemaProps`]: {
    schema: "$schema",
    ref: "$ref",
    xKubernetesPreserveUnknownFields: "x-kubernetes-preserve-unknown-fields",
    xKubernetesEmbeddedResource: "x-kubernetes-embedded-resource",
    xKubernetesIntOrString: "x-kubernetes-int-or-string",
    xKubernetesListMapKeys: "x-kubernetes-list-map-keys",
    xKubernetesListType: "x-kubernetes-list-type",
    xKubernetesMapType: "x-kubernetes-map-type",
    xKubernetesValidations: "x-kubernetes-validations",
  },
};

/**
 * Fields of Go structs embedded with `json:",inline"`: a message field in protobuf whose own
 * fields sit beside the parent's in JSON (RuleWithOperations' Rule). Always written (Go value).
 */
const INLINE: Record<string, string[]> = {
  [`${ADMREG}.RuleWithOperations`]: ["rule"],
  [`${ADMREG}.NamedRuleWithOperations`]: ["ruleWithOperations"],
};

/**
 * Messages whose JSON form is not an object of their fields; the codec implements each form:
 * - `time`, `microTime`: an RFC 3339 string (`{seconds, nanos}`);
 * - `json`: any JSON value, held as JSON text in the bytes field 1 (FieldsV1, apiextensions'
 *   JSON); null is the empty message;
 * - `rawExtension`: an object, held in field 1 as a whole protobuf body (built-in kinds) or as
 *   JSON text;
 * - `stringList`: an array of strings, the repeated string field 1 (Go's `[]string` types);
 * - `union`: one of several JSON shapes, each held in its own field ({@link Union}).
 */
const FORMS: Record<string, Form> = {
  [`${META}.Time`]: { form: "time" },
  // A number or a string, as its `type` says.
  ["k8s.io.apimachinery.pkg.util.intstr.IntOrString"]: { form: "intOrString" },
  [`${META}.MicroTime`]: { form: "microTime" },
  [`${META}.FieldsV1`]: { form: "json" },
  [`${RUNTIME}.RawExtension`]: { form: "rawExtension" },
  "k8s.io.api.certificates.v1.ExtraValue": { form: "stringList" },
  [`${AUTHN}.ExtraValue`]: { form: "stringList" },
  [`${AUTHN}.AttestationValue`]: { form: "stringList" },
  [`${AUTHZ}.ExtraValue`]: { form: "stringList" },
  [`${APIEXT}.JSON`]: { form: "json" },
  // A schema or a list of schemas.
  [`${APIEXT}.JSONSchemaPropsOrArray`]: {
    form: "union",
    union: { object: "schema", array: "jSONSchemas" },
  },
  // A schema or a boolean; a schema also sets `allows` (kube's UnmarshalJSON).
  [`${APIEXT}.JSONSchemaPropsOrBool`]: {
    form: "union",
    union: { object: "schema", boolean: "allows" },
  },
  // A schema or a list of property names.
  [`${APIEXT}.JSONSchemaPropsOrStringArray`]: {
    form: "union",
    union: { object: "schema", array: "property" },
  },
};

/**
 * The fields holding each JSON shape of a `union` message. JSON to protobuf: the value's shape
 * picks the field (an object also sets the `boolean` field to true). Protobuf to JSON, as kube's
 * MarshalJSON: a non-empty `array` field, else the `object` field, else the `boolean` field
 * (false when unset), else null.
 */
export interface Union {
  object?: string;
  array?: string;
  boolean?: string;
}

export interface Form {
  form: "time" | "microTime" | "json" | "rawExtension" | "stringList" | "union" | "intOrString";
  union?: Union;
}

/** The scalar types the codec implements. */
const SCALAR_TYPES = new Set(["string", "bytes", "bool", "int32", "int64", "double"]);

export interface FieldDescriptor {
  name: string;
  number: number;
  /** scalar type name (`string`, `int64`, `bytes`, …) or fully qualified message name */
  type: string;
  /** `repeated` lists, `map` maps (string keys), otherwise a singular field */
  label?: "repeated" | "map";
  /** singular fields: written when empty (Go value field) unless `false` */
  always?: boolean;
  /** the JSON name, when it is not `name` */
  json?: string;
  /** a Go struct embedded inline: its fields are the parent's in JSON */
  inline?: boolean;
}

export interface MessageDescriptor {
  /** the message's own JSON form ({@link FORMS}); an object of its fields when absent */
  form?: Form["form"];
  union?: Union;
  fields: FieldDescriptor[];
}

export interface Descriptors {
  /** apiVersion -> kind -> message name */
  kinds: Record<string, Record<string, string>>;
  messages: Record<string, MessageDescriptor>;
}

/** Builds the descriptors from the proto sources found under `protoRoot`. */
export function extract(protoRoot: string): Descriptors {
  const root = new protobuf.Root();
  for (const file of PROTO_FILES) {
    protobuf.parse(readFileSync(join(protoRoot, file), "utf8"), root, { keepCase: true });
  }
  root.resolveAll();

  const kinds: Descriptors["kinds"] = {};
  const wanted: string[] = [...ROOTS];
  for (const [apiVersion, { pkg, kinds: names, lists }] of Object.entries(SERVED)) {
    kinds[apiVersion] = {};
    for (const kind of names) {
      for (const k of lists === false ? [kind] : [kind, `${kind}List`]) {
        kinds[apiVersion][k] = `${pkg}.${k}`;
        wanted.push(`${pkg}.${k}`);
      }
    }
  }
  for (const apiVersion of [...Object.keys(SERVED), "meta.platform.io/v1"]) {
    kinds[apiVersion] ??= {};
    for (const kind of META_KINDS) {
      kinds[apiVersion][kind] = `${META}.${kind}`;
      wanted.push(`${META}.${kind}`);
    }
  }

  const messages: Descriptors["messages"] = {};
  while (wanted.length > 0) {
    const name = wanted.pop()!;
    if (messages[name]) continue;
    const type = root.lookupType(name);
    const whenSet = new Set(WRITTEN_WHEN_SET[name] ?? []);
    const jsonNames = new Map(Object.entries(JSON_NAMES[name] ?? {}));
    const inline = new Set(INLINE[name] ?? []);
    const fields: FieldDescriptor[] = [];
    for (const field of type.fieldsArray) {
      field.resolve();
      const isMap = field instanceof protobuf.MapField;
      if (isMap && (field as protobuf.MapField).keyType !== "string") {
        throw new Error(`Map field ${name}.${field.name} has a non-string key`);
      }
      let typeName = field.type;
      if (field.resolvedType instanceof protobuf.Type) {
        typeName = field.resolvedType.fullName.slice(1);
        wanted.push(typeName);
      } else if (field.resolvedType) {
        throw new Error(`Field ${name}.${field.name} has an unsupported enum type`);
      } else if (!SCALAR_TYPES.has(typeName)) {
        throw new Error(`Field ${name}.${field.name} has an unsupported type ${typeName}`);
      }
      const out: FieldDescriptor = { name: field.name, number: field.id, type: typeName };
      if (isMap) out.label = "map";
      else if (field.repeated) out.label = "repeated";
      else out.always = !whenSet.delete(field.name);
      if (inline.delete(field.name)) {
        if (!(field.resolvedType instanceof protobuf.Type) || field.repeated || isMap) {
          throw new Error(`INLINE names ${name}.${field.name}, not a singular message field`);
        }
        out.inline = true;
      }
      const json = jsonNames.get(field.name);
      if (json !== undefined) {
        jsonNames.delete(field.name);
        out.json = json;
      }
      fields.push(out);
    }
    if (whenSet.size > 0) {
      throw new Error(`Unknown fields in WRITTEN_WHEN_SET for ${name}: ${[...whenSet]}`);
    }
    if (inline.size > 0) {
      throw new Error(`Unknown fields in INLINE for ${name}: ${[...inline]}`);
    }
    if (jsonNames.size > 0) {
      throw new Error(`Unknown fields in JSON_NAMES for ${name}: ${[...jsonNames.keys()]}`);
    }
    // kube writes fields in field-number order
    fields.sort((a, b) => a.number - b.number);
    const form = FORMS[name];
    for (const member of Object.values(form?.union ?? {})) {
      if (!fields.some((f) => f.name === member)) {
        throw new Error(`FORMS names unknown union field ${name}.${member}`);
      }
    }
    messages[name] = form ? { ...form, fields } : { fields };
  }
  for (const table of [WRITTEN_WHEN_SET, JSON_NAMES, FORMS, INLINE]) {
    for (const name of Object.keys(table)) {
      if (!messages[name]) throw new Error(`${name} is not a message the served kinds reach`);
    }
  }

  const sorted: Descriptors["messages"] = {};
  for (const name of Object.keys(messages).sort()) sorted[name] = messages[name];
  return { kinds, messages: sorted };
}

if (import.meta.main) {
  const protoRoot = Deno.args[0] ?? "../shared/conformance/k8s-proto";
  const output = Deno.args[1] ?? "lib/codec/protobuf/descriptors.json";
  const descriptors = extract(protoRoot);
  writeFileSync(output, JSON.stringify(descriptors, null, 2) + "\n");
  console.log(
    `wrote ${output}: ${Object.keys(descriptors.messages).length} messages`,
  );
}
