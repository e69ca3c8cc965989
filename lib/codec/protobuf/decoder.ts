/**
 * The protobuf decoder: a body (magic + envelope + message) to the object in the JSON form the
 * JSON API serves. Empty strings, zeros, false, empty lists and maps and zero times of value
 * fields are left out (kube's `omitempty`), empty nested structs stay as `{}`, pointer fields
 * are kept whenever present, lists always carry `items` (`[]` when empty), and the fields of
 * a struct embedded inline sit beside its parent's. Malformed,
 * truncated or unsupported input throws `ProtobufError` saying what and where.
 *
 * @module
 */

import { jsonTooDeep, MAX_NESTING_DEPTH } from "../../api/mod.ts";
import { MAGIC, MAX_OBJECT_DEPTH, readEnvelope } from "./envelope.ts";
import { noProtobufEncoding } from "./errors.ts";
import { formatTime, toBase64 } from "./json_scalars.ts";
import {
  type FieldDescriptor,
  message,
  type MessageDescriptor,
  messageForKind,
  toPlatformApiVersion,
} from "./messages.ts";
import type { GroupVersionKind, JsonObject } from "./types.ts";
import { Reader, WIRE_BYTES, WIRE_FIXED64, WIRE_VARINT } from "./wire.ts";

/** Options of {@link decodeObject}. */
export interface DecodeOptions {
  /** The type to decode as when the envelope's typeMeta is empty. */
  as?: GroupVersionKind;
}

/**
 * Decodes a protobuf body (magic + envelope) into the JSON-shaped object the JSON API serves,
 * with `k8s.io` groups in apiVersion read as `platform.io`. Throws `ProtobufError` with
 * what is wrong and where on malformed, truncated or unsupported input.
 */
export function decodeObject(bytes: Uint8Array, opts: DecodeOptions = {}): JsonObject {
  return decodeTop(bytes, opts, 0);
}

const textDecoder = new TextDecoder("utf-8", { fatal: true });

/** The object of a body, nested `depth` RawExtensions deep. */
function decodeTop(bytes: Uint8Array, opts: DecodeOptions, depth: number): JsonObject {
  const { apiVersion, kind, start, end } = readEnvelope(bytes);
  const platformApiVersion = toPlatformApiVersion(apiVersion);
  const type = apiVersion || kind ? { apiVersion: platformApiVersion, kind } : opts.as;
  const name = type && messageForKind(type.apiVersion, type.kind);
  if (!name) throw noProtobufEncoding("decode", type);
  const body = decodeMessage(new Reader(bytes, type.kind, start, end), message(name), depth);
  const out: JsonObject = {};
  if (kind) out.kind = kind;
  if (apiVersion) out.apiVersion = platformApiVersion;
  return Object.assign(out, body);
}

/** Decodes the fields of one message from the reader's range (its JSON form). */
export function decodeMessage(r: Reader, desc: MessageDescriptor, depth: number): JsonObject {
  const out: JsonObject = {};
  while (!r.done) {
    const tag = r.tagValue();
    const number = Math.floor(tag / 8);
    const wireType = tag & 7;
    const field = desc.byNumber.get(number);
    if (!field) {
      r.skip(wireType);
      continue;
    }
    const key = field.json ?? field.name;
    if (field.label === "map") {
      expectWireType(r, field, wireType, WIRE_BYTES);
      const end = r.delimitedEnd();
      const entry = Reader.nested(r, key, r.pos, end);
      r.pos = end;
      decodeMapEntry(entry, field, depth, (out[key] ??= {}) as JsonObject);
    } else if (field.label === "repeated") {
      const list = (out[key] ??= []) as unknown[];
      const packedWireType = field.type === "double" ? WIRE_FIXED64 : WIRE_VARINT;
      if (wireType === WIRE_BYTES && isPackable(field.type)) {
        // a packed list (kube never writes one, but protobuf readers must accept it)
        const [start, end] = r.lengthDelimited();
        const packed = Reader.nested(r, key, start, end);
        while (!packed.done) list.push(decodeValue(packed, field, packedWireType, depth));
      } else {
        list.push(decodeValue(r, field, wireType, depth));
      }
    } else if (field.inline) {
      const inner = decodeValue(r, field, wireType, depth) as JsonObject;
      for (const [k, v] of Object.entries(inner)) setKey(out, k, v);
    } else {
      setKey(out, key, decodeValue(r, field, wireType, depth));
    }
  }
  // kube's JSON leaves out empty value fields (omitempty) and zero times
  for (const field of desc.fields) {
    const key = field.json ?? field.name;
    const v = out[key];
    if (v === undefined) {
      if (field.label === "repeated" && key === "items" && desc.name.endsWith("List")) {
        out.items = []; // `items` has no omitempty
      }
    } else if (field.always && (v === "" || v === 0 || v === false)) delete out[key];
  }
  return out;
}

/** The value field of a map's entries, by the map field. */
const mapValueFields = new WeakMap<FieldDescriptor, FieldDescriptor>();

/** Decodes one map entry into `map`. */
function decodeMapEntry(r: Reader, field: FieldDescriptor, depth: number, map: JsonObject): void {
  let key = "";
  let value: unknown = undefined;
  let valueField = mapValueFields.get(field);
  if (!valueField) mapValueFields.set(field, valueField = { ...field, label: undefined });
  while (!r.done) {
    const tag = r.tagValue();
    const number = Math.floor(tag / 8);
    const wireType = tag & 7;
    if (number === 1) {
      if (wireType !== WIRE_BYTES) r.fail(`map key has wire type ${wireType}`);
      key = r.string();
    } else if (number === 2) {
      value = decodeValue(r, valueField, wireType, depth);
    } else r.skip(wireType);
  }
  if (value === undefined) value = emptyValue(r, field, depth);
  setKey(map, key, value);
}

/** The JSON form of a map value that the entry leaves out (the zero value of its type). */
function emptyValue(r: Reader, field: FieldDescriptor, depth: number): unknown {
  switch (field.type) {
    case "string":
    case "bytes":
      return "";
    case "bool":
      return false;
    case "int32":
    case "int64":
    case "double":
      return 0;
  }
  const desc = message(field.type);
  return desc.form ? decodeSpecial(Reader.nested(r, "value", r.end, r.end), desc, depth) : {};
}

function isPackable(type: string): boolean {
  return type === "int32" || type === "int64" || type === "bool" || type === "double";
}

function expectWireType(r: Reader, field: FieldDescriptor, got: number, want: number): void {
  if (got !== want) r.fail(`field ${field.name} (${field.number}) has wire type ${got}`);
}

function decodeValue(r: Reader, field: FieldDescriptor, wireType: number, depth: number): unknown {
  switch (field.type) {
    case "string":
      expectWireType(r, field, wireType, WIRE_BYTES);
      return r.string();
    case "bytes":
      expectWireType(r, field, wireType, WIRE_BYTES);
      return toBase64(r.bytes());
    case "bool":
      expectWireType(r, field, wireType, WIRE_VARINT);
      return r.bool();
    case "int32":
      expectWireType(r, field, wireType, WIRE_VARINT);
      return r.int32();
    case "int64":
      expectWireType(r, field, wireType, WIRE_VARINT);
      return r.int64();
    case "double": {
      expectWireType(r, field, wireType, WIRE_FIXED64);
      const n = r.double();
      if (!Number.isFinite(n)) r.fail(`field ${field.name} (${field.number}) is ${n}`);
      return n;
    }
  }
  expectWireType(r, field, wireType, WIRE_BYTES);
  const end = r.delimitedEnd();
  const inner = Reader.nested(r, field.json ?? field.name, r.pos, end);
  r.pos = end;
  const desc = message(field.type);
  return desc.form ? decodeSpecial(inner, desc, depth) : decodeMessage(inner, desc, depth);
}

/** The JSON form of the messages that have their own. */
function decodeSpecial(r: Reader, desc: MessageDescriptor, depth: number): unknown {
  switch (desc.form) {
    case "time":
    case "microTime": {
      if (r.done) return null; // zero time (left out by decodeMessage's caller)
      let seconds = 0;
      let nanos = 0;
      while (!r.done) {
        const tag = r.tagValue();
        const number = Math.floor(tag / 8);
        const wireType = tag & 7;
        if (number <= 2 && wireType !== WIRE_VARINT) {
          r.fail(`field ${number} has wire type ${wireType}`);
        }
        if (number === 1) seconds = r.int64();
        else if (number === 2) nanos = r.int32();
        else r.skip(wireType);
      }
      if (nanos < 0 || nanos > 999_999_999) r.fail(`nanos ${nanos} out of range`);
      return formatTime(seconds, desc.form === "microTime" ? nanos : undefined, r);
    }
    case "json":
    case "rawExtension": {
      let raw: Uint8Array | undefined;
      while (!r.done) {
        const [number, wireType] = r.tag();
        if (number === 1) {
          if (wireType !== WIRE_BYTES) r.fail(`field 1 has wire type ${wireType}`);
          raw = r.bytesView(); // only read below (decoded or parsed), never kept
        } else r.skip(wireType);
      }
      if (raw === undefined || raw.length === 0) return null;
      if (desc.form === "rawExtension" && MAGIC.every((b, i) => raw[i] === b)) {
        if (depth + 1 >= MAX_OBJECT_DEPTH) r.fail("objects nested too deeply");
        return decodeTop(raw, {}, depth + 1);
      }
      let json: unknown;
      let text = "";
      try {
        text = textDecoder.decode(raw);
        json = JSON.parse(text);
      } catch {
        r.fail("raw bytes are neither a protobuf object nor JSON");
      }
      if (jsonTooDeep(text, MAX_NESTING_DEPTH - r.level)) {
        r.fail(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
      }
      return json;
    }
    case "stringList": {
      const items: string[] = [];
      while (!r.done) {
        const [number, wireType] = r.tag();
        if (number === 1) {
          if (wireType !== WIRE_BYTES) r.fail(`field 1 has wire type ${wireType}`);
          items.push(r.string());
        } else r.skip(wireType);
      }
      return items;
    }
    case "intOrString": {
      let type = 0;
      let intVal = 0;
      let strVal = "";
      while (!r.done) {
        const [number, wireType] = r.tag();
        if (number === 1 || number === 2) {
          if (wireType !== WIRE_VARINT) r.fail(`field ${number} has wire type ${wireType}`);
          if (number === 1) type = r.int64();
          else intVal = r.int32();
        } else if (number === 3) {
          if (wireType !== WIRE_BYTES) r.fail(`field 3 has wire type ${wireType}`);
          strVal = r.string();
        } else r.skip(wireType);
      }
      return type === 1 ? strVal : intVal;
    }
    case "union": {
      // kube's MarshalJSON: a non-empty list, else the schema, else the boolean, else null
      const u = desc.union!;
      const out = decodeMessage(r, desc, depth);
      const list = u.array === undefined ? undefined : out[u.array];
      if (Array.isArray(list) && list.length > 0) return list;
      if (u.object !== undefined && out[u.object] !== undefined) return out[u.object];
      if (u.boolean !== undefined) return out[u.boolean] ?? false;
      return null;
    }
  }
  return decodeMessage(r, desc, depth);
}

/** Sets a key on a JSON object without invoking setters (`__proto__` is an ordinary key). */
function setKey(obj: JsonObject, key: string, value: unknown): void {
  if (value === null) {
    // zero times and empty raw extensions: the field is left out
    return;
  }
  if (key !== "__proto__") {
    obj[key] = value;
    return;
  }
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
