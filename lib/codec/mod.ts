/**
 * Body codecs: the public surface of `lib/codec`. Content negotiation (`negotiate.ts`), response
 * bodies (`encode.ts`: JSON, YAML, protobuf) and request bodies (`decode.ts`), the YAML emitter,
 * Table and PartialObjectMetadata views, and the protobuf codec (`protobuf/`), whose list-body
 * and watch-frame encoders the handlers use directly.
 *
 * @module
 */

export { decodeBody, decodeBytes, type DecodedBody } from "./decode.ts";
export { encodeBody } from "./encode.ts";
export {
  type Encoding,
  KUBE_PROTOBUF,
  type MediaRange,
  type Negotiated,
  type NegotiateOptions,
  negotiateOutput,
  parseAccept,
  PROTOBUF,
  requestEncoding,
} from "./negotiate.ts";
export { toPartial, toPartialList } from "./partial.ts";
export {
  decodeObject,
  type DecodeOptions,
  decodeWatchEvent,
  encodeEnvelope,
  encodeListBody,
  encodeMessage,
  encodeObject,
  type EncodeOptions,
  encodeWatchEvent,
  type GroupVersionKind,
  hasProtobuf,
  type JsonObject,
  listBodyChunks,
  PROTOBUF_MEDIA_TYPE,
  PROTOBUF_WATCH_MEDIA_TYPE,
  ProtobufError,
  splitWatchFrames,
  type WatchEvent,
} from "./protobuf/mod.ts";
export { type IncludeObject, parseIncludeObject, toTable } from "./table.ts";
export { emitYaml } from "./yaml_emit.ts";
export { AGE, CREATED_AT, keyCount, NAME } from "./columns.ts";
