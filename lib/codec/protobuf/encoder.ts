/**
 * The protobuf encoder: a JSON-shaped object of a built-in kind to its message bytes, in
 * Kubernetes' layout (gogo-protobuf), checked against the round-trip fixtures in
 * `testdata/k8s-api-testdata`:
 * - fields in field-number order; Go value fields written even when empty (tag + zero), Go
 *   pointer fields only when set; repeated fields one tag per element (not packed);
 * - map entries sorted by key (bytewise), each `{key = 1, value = 2}` with both written;
 * - `Time` is `{seconds = 1, nanos = 2}` with nanos always 0 (JSON has second precision), a zero
 *   Time is an empty message; `MicroTime` keeps the nanoseconds of its microsecond JSON form;
 * - `[]byte` is base64 in JSON; `FieldsV1` and apiextensions' `JSON` (a schema's `default`,
 *   `enum`, `example`) hold their JSON text; `RawExtension` (a WatchEvent's object) holds a
 *   complete encoded object (with magic and envelope) or JSON text;
 * - `double` (a schema's `maximum`, …) is 8 bytes little-endian (wire type 1);
 * - the JSONSchemaPropsOr… unions hold each JSON shape in its own field (a schema, a list of
 *   schemas or of strings, a boolean); `ExtraValue`-like messages are a JSON list of strings;
 * - a Go struct embedded inline (admissionregistration's Rule in RuleWithOperations) is a
 *   message field read from the parent's own JSON object, always written.
 *
 * @module
 */

import {
  encodeError,
  EncodeFailure,
  fail,
  noProtobufEncoding,
  prefixed,
  ProtobufError,
  shownType,
} from "./errors.ts";
import { beginEnvelope, endEnvelope, MAX_OBJECT_DEPTH } from "./envelope.ts";
import { fromBase64, parseTimeCached } from "./json_scalars.ts";
import {
  type FieldDescriptor,
  hasProtobuf,
  message,
  messageForKind,
  type MessageForm,
  toPlatformApiVersion,
} from "./messages.ts";
import { type GroupVersionKind, isObject, type JsonObject } from "./types.ts";
import { WIRE_BYTES, WIRE_FIXED64, WIRE_VARINT, Writer } from "./wire.ts";

/** Options of {@link encodeObject}. */
export interface EncodeOptions {
  /**
   * The type to encode as when the object carries no apiVersion/kind (a WatchEvent has none).
   * @default the object's own apiVersion and kind
   */
  as?: GroupVersionKind;
  /**
   * The apiVersion string written into the envelope's typeMeta, e.g. the upstream
   * `certificates.k8s.io/v1` spelling for a fixture comparison.
   * @default the object's own apiVersion (empty when it has none)
   */
  envelopeApiVersion?: string;
}

/**
 * Encodes a JSON-shaped object of a built-in kind as a protobuf body (magic + envelope).
 * Fields that have no protobuf field are dropped, as kube does. Throws {@link ProtobufError}
 * when the kind has no protobuf encoding or a field has the wrong JSON type.
 *
 * @example
 * ```ts
 * const body = encodeObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } });
 * ```
 */
export function encodeObject(obj: object, opts: EncodeOptions = {}): Uint8Array {
  return encodeTop(obj as JsonObject, opts, 0);
}

/**
 * The message bytes of one object (no magic, no envelope): what a list body's `items` field
 * holds. With `encodeListBody`, lets a server encode each stored object once and build list
 * bodies from the cached bytes.
 */
export function encodeMessage(obj: JsonObject, as: GroupVersionKind): Uint8Array {
  const name = messageForKind(toPlatformApiVersion(as.apiVersion), as.kind);
  if (!name) throw noProtobufEncoding("encode", as);
  const w = new Writer(512);
  try {
    writeMessage(w, encoderFor(name), obj, 0);
  } catch (e) {
    throw encodeError(as.kind, e);
  }
  return w.finish();
}

/** The body (magic + envelope + message) of an object, nested `depth` RawExtensions deep. */
function encodeTop(obj: JsonObject, opts: EncodeOptions, depth: number): Uint8Array {
  if (!isObject(obj)) {
    throw new ProtobufError("Cannot encode protobuf: the object is not an object");
  }
  const apiVersion = typeof obj.apiVersion === "string" ? obj.apiVersion : "";
  const kind = typeof obj.kind === "string" ? obj.kind : "";
  const type = apiVersion || kind ? { apiVersion, kind } : opts.as;
  const name = type && messageForKind(toPlatformApiVersion(type.apiVersion), type.kind);
  if (!name) throw noProtobufEncoding("encode", type);
  // One buffer for the whole body: magic, envelope, and the object written in place as the
  // envelope's `raw` (its length prefix reserved and patched), so no nested copy.
  const items = Array.isArray(obj.items) ? obj.items.length : 0;
  const w = new Writer(items > 0 ? Math.min(items * 512, 1 << 26) : 512);
  const raw = beginEnvelope(w, opts.envelopeApiVersion ?? apiVersion, kind);
  try {
    writeMessage(w, encoderFor(name), obj, depth);
  } catch (e) {
    throw encodeError(type.kind, e);
  }
  return endEnvelope(w, raw);
}

// The encoder walks a compiled form of the descriptors: per message its special JSON form (if
// any) and its fields with the tag, the type as a small integer and the nested message resolved
// (lazily: messages can be recursive), so that the hot loop does no string work or map lookups.

const T_STRING = 0;
const T_BYTES = 1;
const T_BOOL = 2;
const T_INT32 = 3;
const T_INT64 = 4;
const T_MESSAGE = 5;
const T_DOUBLE = 6;

const L_SINGLE = 0;
const L_REPEATED = 1;
const L_MAP = 2;

const S_NONE = 0;
const S_TIME = 1;
const S_MICRO_TIME = 2;
const S_JSON = 3;
const S_RAW_EXTENSION = 4;
const S_STRING_LIST = 5;
const S_UNION = 6;
const S_INT_OR_STRING = 7;

const SPECIALS: Record<MessageForm, number> = {
  time: S_TIME,
  microTime: S_MICRO_TIME,
  json: S_JSON,
  rawExtension: S_RAW_EXTENSION,
  stringList: S_STRING_LIST,
  union: S_UNION,
  intOrString: S_INT_OR_STRING,
};

interface EncField {
  /** the JSON name */
  name: string;
  number: number;
  /** the field's tag with its wire type */
  tag: number;
  type: number;
  typeName: string;
  label: number;
  always: boolean;
  /** embedded inline: the message's fields are read from the parent's object */
  inline: boolean;
  /** the name is also a property of Object.prototype: read it only when own */
  inherited: boolean;
  /** the nested message (T_MESSAGE), resolved on first use */
  msg: EncMessage | undefined;
}

/** A message compiled for encoding. */
export interface EncMessage {
  name: string;
  special: number;
  /** the fields (of a union too: its members are ordinary fields) */
  fields: EncField[];
  /** S_UNION: the field of each JSON shape */
  union: { object?: EncField; array?: EncField; boolean?: EncField } | undefined;
  /** Writes the fields of an object of this message (generated, see {@link fieldWriter}). */
  write: FieldWriter;
}

type FieldWriter = (w: Writer, obj: JsonObject, depth: number) => void;

const encoders = new Map<string, EncMessage>();

const SCALARS: Record<string, number> = {
  string: T_STRING,
  bytes: T_BYTES,
  bool: T_BOOL,
  int32: T_INT32,
  int64: T_INT64,
  double: T_DOUBLE,
};

/** The wire type of a scalar or message value of that type. */
function wireTypeOf(type: number): number {
  return type <= T_BYTES || type === T_MESSAGE
    ? WIRE_BYTES
    : type === T_DOUBLE
    ? WIRE_FIXED64
    : WIRE_VARINT;
}

/** The compiled encoder of a message (compiled on first use). */
export function encoderFor(name: string): EncMessage {
  let m = encoders.get(name);
  if (m) return m;
  const desc = message(name);
  const special = desc.form ? SPECIALS[desc.form] : S_NONE;
  const fields = special === S_NONE || special === S_UNION ? desc.fields.map(compileField) : [];
  let union: EncMessage["union"];
  if (special === S_UNION) {
    const member = (n: string | undefined) => fields.find((f) => f.name === n);
    union = {
      object: member(desc.union?.object),
      array: member(desc.union?.array),
      boolean: member(desc.union?.boolean),
    };
  }
  m = { name, special, fields, union, write: fieldWriter(fields) };
  encoders.set(name, m);
  return m;
}

function compileField(f: FieldDescriptor): EncField {
  let type = Object.hasOwn(SCALARS, f.type) ? SCALARS[f.type] : -1;
  if (type < 0) {
    if (!f.type.includes(".")) throw new Error(`Unsupported protobuf field type ${f.type}`);
    type = T_MESSAGE;
  }
  const label = f.label === "map" ? L_MAP : f.label === "repeated" ? L_REPEATED : L_SINGLE;
  const wire = label === L_MAP ? WIRE_BYTES : wireTypeOf(type);
  const name = f.json ?? f.name;
  return {
    name,
    number: f.number,
    tag: f.number * 8 + wire,
    type,
    typeName: f.type,
    label,
    always: f.always === true,
    inline: f.inline === true,
    inherited: name in Object.prototype,
    msg: undefined,
  };
}

/** Writes the fields of a message's value (an object, or the JSON form of a special). */
export function writeMessage(w: Writer, m: EncMessage, value: unknown, depth: number): void {
  if (m.special !== S_NONE) {
    writeSpecial(w, m, value, depth);
    return;
  }
  if (value != null && !isObject(value)) fail("an object", value);
  m.write(w, (value ?? {}) as JsonObject, depth);
}

/**
 * The field loop of a message, generated once per message as straight-line code reading every
 * field by its constant name (`obj["name"]`): V8 then caches the lookups per object shape (the
 * items of a list share theirs), where a loop over the names makes every read a generic keyed
 * lookup. Same logic as the loop it unrolls: each field in number order; null or absent
 * fields are skipped, except value fields (`always`) that are written with their zero value;
 * names that Object.prototype also has are read only as own properties.
 */
function fieldWriter(fields: EncField[]): FieldWriter {
  const lines: string[] = [];
  fields.forEach((field, f) => {
    const key = JSON.stringify(field.name);
    const read = field.inherited
      ? `Object.hasOwn(obj, ${key}) ? obj[${key}] : undefined`
      : `obj[${key}]`;
    if (field.inline) {
      lines.push(`f = ${f}; writeValue(w, F[${f}], ${field.tag}, obj, depth);`);
      return;
    }
    lines.push(`f = ${f}; v = ${read};`);
    if (field.label === L_SINGLE) {
      const call = `writeValue(w, F[${f}], ${field.tag}, v, depth);`;
      lines.push(field.always ? call : `if (v != null) ${call}`);
    } else {
      const fn = field.label === L_REPEATED ? "writeRepeated" : "writeMap";
      lines.push(`if (v != null) ${fn}(w, F[${f}], v, depth);`);
    }
  });
  const body = `return function write(w, obj, depth) {
  let f = -1;
  let v;
  try {
    ${lines.join("\n    ")}
  } catch (e) {
    const name = F[f].name;
    throw prefixed(e, () => "." + name);
  }
};`;
  const make = new Function("F", "writeValue", "writeRepeated", "writeMap", "prefixed", body);
  return make(fields, writeValue, writeRepeated, writeMap, prefixed) as FieldWriter;
}

function writeRepeated(w: Writer, field: EncField, v: unknown, depth: number): void {
  if (!Array.isArray(v)) fail("an array", v);
  for (let i = 0; i < v.length; i++) {
    const item = v[i];
    try {
      // null is a value only of raw JSON (a schema's `enum: [null]`): the empty message
      if (item == null && !(field.type === T_MESSAGE && msgOf(field).special === S_JSON)) {
        fail("a value", item);
      }
      writeValue(w, field, field.tag, item, depth);
    } catch (e) {
      throw prefixed(e, () => `[${i}]`);
    }
  }
}

function writeMap(w: Writer, field: EncField, v: unknown, depth: number): void {
  if (!isObject(v)) fail("an object", v);
  const keys = Object.keys(v);
  if (keys.length > 1) sortBytewise(keys);
  const valueTag = 2 * 8 + wireTypeOf(field.type);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    w.uvarint(field.tag);
    const mark = w.beginLength();
    w.uvarint(1 * 8 + WIRE_BYTES);
    w.string(key);
    try {
      writeValue(w, field, valueTag, v[key], depth);
    } catch (e) {
      throw prefixed(e, () => `[${JSON.stringify(key)}]`);
    }
    w.endLength(mark);
  }
}

/** Writes one field with that tag; `value` null/undefined writes the zero value. */
function writeValue(w: Writer, field: EncField, tag: number, value: unknown, depth: number): void {
  switch (field.type) {
    case T_STRING:
      if (value == null) value = "";
      else if (typeof value !== "string") fail("a string", value);
      w.uvarint(tag);
      w.string(value as string);
      return;
    case T_BYTES:
      if (value != null && typeof value !== "string") fail("a base64 string", value);
      w.uvarint(tag);
      w.bytes(fromBase64((value as string | undefined) ?? ""));
      return;
    case T_BOOL:
      if (value != null && typeof value !== "boolean") fail("a boolean", value);
      w.uvarint(tag);
      w.uvarint(value ? 1 : 0);
      return;
    case T_INT32:
    case T_INT64: {
      const n = value ?? 0;
      if (
        typeof n !== "number" || !Number.isSafeInteger(n) ||
        (field.type === T_INT32 && (n < -0x80000000 || n > 0x7fffffff))
      ) fail(`an ${field.typeName}`, value);
      w.uvarint(tag);
      w.svarint(n);
      return;
    }
    case T_DOUBLE: {
      const n = value ?? 0;
      if (typeof n !== "number" || !Number.isFinite(n)) fail("a number", value);
      w.uvarint(tag);
      w.double(n);
      return;
    }
  }
  w.uvarint(tag);
  const mark = w.beginLength();
  writeMessage(w, msgOf(field), value, depth);
  w.endLength(mark);
}

/** The nested message of a T_MESSAGE field. */
function msgOf(field: EncField): EncMessage {
  return field.msg ??= encoderFor(field.typeName);
}

/** Messages whose JSON form is not an object of their fields. */
function writeSpecial(w: Writer, m: EncMessage, value: unknown, depth: number): void {
  switch (m.special) {
    case S_TIME:
    case S_MICRO_TIME: {
      if (value == null) return; // zero time: empty message
      if (typeof value !== "string") fail("an RFC 3339 time", value);
      const t = parseTimeCached(value);
      w.uvarint(1 * 8 + WIRE_VARINT);
      w.svarint(t.seconds);
      // kube drops the nanoseconds of Time (its JSON has second precision)
      w.uvarint(2 * 8 + WIRE_VARINT);
      w.svarint(m.special === S_TIME ? 0 : t.nanos);
      return;
    }
    case S_JSON:
      if (value == null) return;
      // a length-delimited UTF-8 string is the same bytes as the encoded bytes field
      w.uvarint(1 * 8 + WIRE_BYTES);
      w.string(JSON.stringify(value));
      return;
    case S_RAW_EXTENSION: {
      if (value == null) return;
      if (!isObject(value)) fail("an object", value);
      const obj = value as JsonObject;
      const builtin = typeof obj.apiVersion === "string" && typeof obj.kind === "string" &&
        hasProtobuf(toPlatformApiVersion(obj.apiVersion), obj.kind);
      if (builtin && depth + 1 >= MAX_OBJECT_DEPTH) fail("a less deeply nested object", "");
      w.uvarint(1 * 8 + WIRE_BYTES);
      if (builtin) w.bytes(encodeTop(obj, {}, depth + 1));
      else w.string(JSON.stringify(value));
      return;
    }
    case S_STRING_LIST:
      if (value == null) return;
      if (!Array.isArray(value)) fail("an array of strings", value);
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        if (item == null || typeof item === "string") {
          w.uvarint(1 * 8 + WIRE_BYTES);
          w.string(item ?? "");
        } else {
          const e = new EncodeFailure("", "a string", shownType(item));
          throw prefixed(e, () => `[${i}]`);
        }
      }
      return;
    case S_UNION:
      writeUnion(w, m, value, depth);
      return;
    case S_INT_OR_STRING: {
      // kube's IntOrString: type (0 int, 1 string), intVal and strVal, all value fields
      if (value != null && typeof value !== "string" && !Number.isInteger(value)) {
        fail("an integer or a string", value);
      }
      const isString = typeof value === "string";
      w.uvarint(1 * 8 + WIRE_VARINT);
      w.svarint(isString ? 1 : 0);
      w.uvarint(2 * 8 + WIRE_VARINT);
      w.svarint(isString ? 0 : (value as number | null) ?? 0);
      w.uvarint(3 * 8 + WIRE_BYTES);
      w.string(isString ? value : "");
      return;
    }
  }
}

/**
 * A union (JSONSchemaPropsOr…): the value's JSON shape picks the member field it is written
 * as; an object also sets the boolean member (a schema `allows`, as kube's UnmarshalJSON). The
 * other fields are written as in any message: value fields empty, the rest left out.
 */
function writeUnion(w: Writer, m: EncMessage, value: unknown, depth: number): void {
  if (value == null) return;
  const u = m.union!;
  const member = Array.isArray(value)
    ? u.array
    : typeof value === "object"
    ? u.object
    : typeof value === "boolean"
    ? u.boolean
    : undefined;
  if (!member) {
    const shapes = [u.object && "an object", u.array && "an array", u.boolean && "a boolean"];
    fail(shapes.filter(Boolean).join(" or "), value);
  }
  for (const field of m.fields) {
    const v = field === member ? value : field === u.boolean && member === u.object ? true : null;
    if (field.label === L_REPEATED) {
      if (v != null) writeRepeated(w, field, v, depth);
    } else if (field.label === L_MAP) {
      if (v != null) writeMap(w, field, v, depth);
    } else if (v != null || field.always) writeValue(w, field, field.tag, v, depth);
  }
}

const textEncoder = new TextEncoder();

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Sorts map keys as Go does, by their UTF-8 bytes. UTF-16 order (the default sort) differs only
 * for surrogate pairs, so the byte comparison is only used when a key has one.
 */
function sortBytewise(keys: string[]): void {
  for (let i = 0; i < keys.length; i++) {
    if (SURROGATE.test(keys[i])) {
      keys.sort(compareBytewise);
      return;
    }
  }
  keys.sort();
}

function compareBytewise(a: string, b: string): number {
  if (a === b) return 0;
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1;
  const x = textEncoder.encode(a);
  const y = textEncoder.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}
