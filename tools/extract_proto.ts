/**
 * Extracts the protobuf message definitions of the built-in kinds from Kubernetes'
 * `generated.proto` files into `lib/codec/protobuf/descriptors.json`, the data the protobuf
 * codec (`lib/codec/protobuf/mod.ts`) encodes and decodes with.
 *
 *     deno task protos [proto-root] [output-file]
 *
 * `proto-root` defaults to `../shared/conformance/k8s-proto` (the checkout beside this repo);
 * `output-file` defaults to `lib/codec/protobuf/descriptors.json`.
 *
 * What it does:
 * - parses the needed `generated.proto` files with protobufjs (parsing only: the codec has its
 *   own encoder, because kube's byte layout writes empty non-pointer fields and sorts map keys,
 *   which protobufjs' encoder does not do);
 * - keeps only the messages reachable from the served kinds ({@link ROOTS});
 * - records for every singular field whether it is always written (a non-pointer Go field) or
 *   only when set (a pointer Go field, listed in {@link WRITTEN_WHEN_SET}): the .proto files do
 *   not carry this, and the round-trip fixtures cannot tell either since every field is set there;
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
];

const META = "k8s.io.apimachinery.pkg.apis.meta.v1";
const RUNTIME = "k8s.io.apimachinery.pkg.runtime";
const CORE = "k8s.io.api.core.v1";

/** Served group versions and their kinds (each also gets its `…List`). */
const SERVED: Record<string, { pkg: string; kinds: string[] }> = {
  "v1": { pkg: CORE, kinds: ["Namespace", "ConfigMap", "Secret", "ServiceAccount", "Event"] },
  "coordination.platform.io/v1": { pkg: "k8s.io.api.coordination.v1", kinds: ["Lease"] },
  "events.platform.io/v1": { pkg: "k8s.io.api.events.v1", kinds: ["Event"] },
  "certificates.platform.io/v1": {
    pkg: "k8s.io.api.certificates.v1",
    kinds: ["CertificateSigningRequest"],
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
};

export interface FieldDescriptor {
  name: string;
  number: number;
  /** scalar type name (`string`, `int64`, `bytes`, …) or fully qualified message name */
  type: string;
  /** `repeated` lists, `map` maps (string keys), otherwise a singular field */
  label?: "repeated" | "map";
  /** singular fields: written when empty (Go value field) unless `false` */
  always?: boolean;
}

export interface Descriptors {
  /** apiVersion -> kind -> message name */
  kinds: Record<string, Record<string, string>>;
  messages: Record<string, { fields: FieldDescriptor[] }>;
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
  for (const [apiVersion, { pkg, kinds: names }] of Object.entries(SERVED)) {
    kinds[apiVersion] = {};
    for (const kind of names) {
      for (const k of [kind, `${kind}List`]) {
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
      }
      const out: FieldDescriptor = { name: field.name, number: field.id, type: typeName };
      if (isMap) out.label = "map";
      else if (field.repeated) out.label = "repeated";
      else out.always = !whenSet.delete(field.name);
      fields.push(out);
    }
    if (whenSet.size > 0) {
      throw new Error(`Unknown fields in WRITTEN_WHEN_SET for ${name}: ${[...whenSet]}`);
    }
    // kube writes fields in field-number order
    fields.sort((a, b) => a.number - b.number);
    messages[name] = { fields };
  }
  for (const name of Object.keys(WRITTEN_WHEN_SET)) {
    if (!messages[name]) throw new Error(`WRITTEN_WHEN_SET names unreachable message ${name}`);
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
