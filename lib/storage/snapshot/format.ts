/**
 * The snapshot file format (version 1): every live key of a store at one revision, as JSON
 * lines, checked end to end.
 *
 * ```
 * {"format":"platform-snapshot","version":1,"revision":R,"keys":N,"takenAt":"<RFC 3339>"}
 * {"key":"/registry/…","createRevision":c,"modRevision":m,"value":"<stored form>"}   × N
 * {"end":true,"keys":N,"sha256":"<hex of every byte before this line>"}
 * ```
 *
 * Values are in their stored form: what the file store keeps on disk, so a resource encrypted
 * at rest stays encrypted in the snapshot (restoring it needs the same encryption keys). Keys
 * come in ascending order, each with modRevision ≤ R. A reader refuses another format or
 * version, a line that does not parse, a key count or checksum that does not match, and a
 * file without its last line (truncated): a snapshot is used whole or not at all.
 *
 * @module
 */

import { createHash, type Hash } from "node:crypto";
import type { KeyValue } from "../store.ts";

/** The `format` of the first line. */
export const SNAPSHOT_FORMAT = "platform-snapshot";
/** The version this code writes and reads. */
export const SNAPSHOT_VERSION = 1;

/** The first line of a snapshot. */
export interface SnapshotHeader {
  format: typeof SNAPSHOT_FORMAT;
  version: number;
  /** The store's revision the snapshot was taken at. */
  revision: number;
  /** How many keys follow. */
  keys: number;
  /** When it was taken (RFC 3339). */
  takenAt: string;
}

/** What a snapshot holds: keys at one revision, values in their stored form. */
export interface SnapshotContent {
  revision: number;
  items: readonly KeyValue[];
  takenAt?: Date;
  /** The stored form of an item's value (encryption at rest), applied as the stream is read.
   * @default the value */
  storedValue?: (kv: KeyValue) => string;
}

/** A snapshot that is not a complete, intact snapshot of a version this code reads. */
export class SnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnapshotError";
  }
}

const enc = new TextEncoder();
/** Items per chunk of the encoded stream. */
const ITEMS_PER_CHUNK = 256;

/** The snapshot's bytes, produced as the stream is read (values are encoded lazily). */
export function encodeSnapshot(content: SnapshotContent): ReadableStream<Uint8Array> {
  const hash = createHash("sha256");
  const header: SnapshotHeader = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    revision: content.revision,
    keys: content.items.length,
    takenAt: (content.takenAt ?? new Date()).toISOString(),
  };
  let next = -1;
  const hashed = (text: string) => {
    const bytes = enc.encode(text);
    hash.update(bytes);
    return bytes;
  };
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < 0) {
        controller.enqueue(hashed(JSON.stringify(header) + "\n"));
        next = 0;
        return;
      }
      if (next >= content.items.length) {
        const trailer = { end: true, keys: content.items.length, sha256: hash.digest("hex") };
        controller.enqueue(enc.encode(JSON.stringify(trailer) + "\n"));
        controller.close();
        return;
      }
      const end = Math.min(content.items.length, next + ITEMS_PER_CHUNK);
      let text = "";
      for (; next < end; next++) {
        const kv = content.items[next];
        text += JSON.stringify({
          key: kv.key,
          createRevision: kv.createRevision,
          modRevision: kv.modRevision,
          value: content.storedValue ? content.storedValue(kv) : kv.value,
        }) + "\n";
      }
      controller.enqueue(hashed(text));
    },
  });
}

/**
 * Reads a snapshot's bytes as they come and checks them: {@link push} each chunk, then
 * {@link finish}. Entries are handed to `onEntry` as their lines complete; a caller that
 * writes them somewhere must discard what it wrote when push or finish throws.
 */
export class SnapshotDecoder {
  readonly #onEntry: (kv: KeyValue) => void;
  readonly #hash: Hash = createHash("sha256");
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  #buffer = "";
  #line = 0;
  #header: SnapshotHeader | undefined;
  #entries = 0;
  #lastKey = "";
  #trailer: { keys: number; sha256: string } | undefined;

  constructor(onEntry: (kv: KeyValue) => void = () => {}) {
    this.#onEntry = onEntry;
  }

  /** The header, once its line has been read. */
  get header(): SnapshotHeader | undefined {
    return this.#header;
  }

  /** Takes the next bytes of the snapshot. */
  push(chunk: Uint8Array): void {
    let text: string;
    try {
      text = this.#decoder.decode(chunk, { stream: true });
    } catch {
      throw new SnapshotError("corrupt: the file is not UTF-8 text");
    }
    this.#buffer += text;
    let start = 0;
    for (let nl = this.#buffer.indexOf("\n"); nl >= 0; nl = this.#buffer.indexOf("\n", start)) {
      this.#takeLine(this.#buffer.slice(start, nl));
      start = nl + 1;
    }
    this.#buffer = this.#buffer.slice(start);
  }

  /** Checks that the snapshot ended whole; resolves to its header. */
  finish(): SnapshotHeader {
    if (this.#buffer.length > 0) {
      if (this.#trailer) throw new SnapshotError("corrupt: data after the last line");
      throw this.#truncated();
    }
    if (!this.#header) throw new SnapshotError("empty file: not a platform snapshot");
    if (!this.#trailer) throw this.#truncated();
    return this.#header;
  }

  #truncated(): SnapshotError {
    const of = this.#header ? ` after ${this.#entries} of ${this.#header.keys} keys` : "";
    return new SnapshotError(`truncated: the snapshot ends${of} without its last line`);
  }

  #takeLine(line: string): void {
    this.#line++;
    if (this.#trailer) throw new SnapshotError("corrupt: data after the last line");
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line);
      if (typeof parsed !== "object" || parsed === null) throw new Error();
    } catch {
      if (this.#line === 1) throw new SnapshotError("not a platform snapshot");
      throw new SnapshotError(`corrupt: line ${this.#line} is not a JSON object`);
    }
    if (!this.#header) {
      this.#header = checkHeader(parsed);
      this.#hash.update(line + "\n");
      return;
    }
    if (parsed.end === true) {
      this.#checkTrailer(parsed);
      return;
    }
    this.#hash.update(line + "\n");
    const kv = checkEntry(parsed, this.#line, this.#header.revision);
    if (kv.key <= this.#lastKey) {
      throw new SnapshotError(`corrupt: line ${this.#line}: keys are not in ascending order`);
    }
    this.#lastKey = kv.key;
    if (++this.#entries > this.#header.keys) {
      throw new SnapshotError(`corrupt: more keys than the ${this.#header.keys} announced`);
    }
    this.#onEntry(kv);
  }

  #checkTrailer(parsed: Record<string, unknown>): void {
    const header = this.#header!;
    if (parsed.keys !== this.#entries || this.#entries !== header.keys) {
      throw new SnapshotError(
        `corrupt: ${this.#entries} keys read, the snapshot announced ${header.keys}`,
      );
    }
    const sha256 = this.#hash.digest("hex");
    if (parsed.sha256 !== sha256) {
      throw new SnapshotError("corrupt: the checksum does not match the content");
    }
    this.#trailer = { keys: this.#entries, sha256 };
  }
}

function checkHeader(parsed: Record<string, unknown>): SnapshotHeader {
  if (parsed.format !== SNAPSHOT_FORMAT) throw new SnapshotError("not a platform snapshot");
  if (parsed.version !== SNAPSHOT_VERSION) {
    throw new SnapshotError(
      `snapshot format version ${JSON.stringify(parsed.version)} is not supported ` +
        `(this platform reads version ${SNAPSHOT_VERSION})`,
    );
  }
  const { revision, keys, takenAt } = parsed;
  if (!isCount(revision) || !isCount(keys) || typeof takenAt !== "string") {
    throw new SnapshotError("corrupt: the first line lacks revision, keys or takenAt");
  }
  return { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, revision, keys, takenAt };
}

function checkEntry(parsed: Record<string, unknown>, line: number, revision: number): KeyValue {
  const { key, createRevision, modRevision, value } = parsed;
  if (
    typeof key !== "string" || !key.startsWith("/") || typeof value !== "string" ||
    !isCount(createRevision) || !isCount(modRevision) || createRevision < 1 ||
    modRevision < createRevision || modRevision > revision
  ) {
    throw new SnapshotError(`corrupt: line ${line} is not a key at or before revision ${revision}`);
  }
  return { key, createRevision, modRevision, value };
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}
