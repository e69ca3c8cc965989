/**
 * The one place where a store key becomes a file-system path. Nothing else in the storage
 * layer builds a path from a key.
 *
 * A key is split on `/` and every segment is encoded on its own; the segments become
 * directories and the last one a file named `<segment>.json`:
 *
 * ```
 * /registry/certificates.platform.io/certificatesigningrequests/csr-1
 *   -> %/registry/certificates%2Eplatform%2Eio/certificatesigningrequests/csr-1.json
 * ```
 *
 * Segment encoding (every segment is treated as hostile):
 * - `a-z`, `0-9`, `-` and `_` stay as they are; every other UTF-8 byte becomes `%XX`
 *   (upper-case hex). So no encoded segment contains `/`, `\`, NUL, `.` (hence no `.`/`..`,
 *   no hidden files, and `.json` marks files unambiguously) or an upper-case letter (so two
 *   keys never differ only by case on a case-insensitive file system: escapes are the only
 *   upper-case text and they fold back to distinct byte values).
 * - The empty segment (the one before a leading `/`, or between `//`) becomes `%`, which no
 *   other segment produces (escapes are always three characters).
 * - Windows device names (`con`, `nul`, `com1`…) get their first character escaped.
 * - An encoded segment longer than {@link MAX_SEGMENT_CHARS} becomes its first 64 encoded
 *   characters + `%%` + the SHA-256 of the raw segment. Ordinary encodings never contain
 *   `%%`, so hashed names cannot meet unhashed ones; two hashed names meet only on a SHA-256
 *   collision.
 * - A whole path longer than {@link MAX_PATH_CHARS} becomes `%%/<sha256 of the key>.json`;
 *   no other path starts with a `%%` directory.
 *
 * Bytes are UTF-8, with lone surrogates encoded as WTF-8 so that no two strings share bytes.
 * Without hashing the encoding is reversible ({@link decodeSegment}), hence injective. The
 * file store also writes the key inside each file and checks it on load.
 * @module
 */

import { createHash } from "node:crypto";

/** Encoded segments longer than this many characters are shortened with a hash. */
export const MAX_SEGMENT_CHARS = 200;
/** Relative paths longer than this many characters are replaced by a hash of the key. */
export const MAX_PATH_CHARS = 1024;

/** The suffix of object files; no encoded segment contains a `.`. */
export const OBJECT_SUFFIX = ".json";

const RAW = /^[a-z0-9_-]$/;
const PLAIN = /^[a-z0-9_-]+$/;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;
const HEX = "0123456789ABCDEF";
/**
 * UTF-8, except that a lone surrogate is encoded like a code point of its own (WTF-8), so
 * that distinct strings always give distinct bytes (TextEncoder would turn every lone
 * surrogate into U+FFFD).
 */
function wtf8(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else {
      out.push(
        0xf0 | (cp >> 18),
        0x80 | ((cp >> 12) & 63),
        0x80 | ((cp >> 6) & 63),
        0x80 | (cp & 63),
      );
    }
  }
  return out;
}

function sha256(text: string): string {
  return createHash("sha256").update(new Uint8Array(wtf8(text))).digest("hex");
}

function escapeBytes(text: string): string {
  let out = "";
  for (const byte of wtf8(text)) out += `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  return out;
}

/** Encodes one key segment as a safe file or directory name (see the module comment). */
export function encodeSegment(segment: string): string {
  if (segment === "") return "%";
  if (PLAIN.test(segment) && segment.length <= MAX_SEGMENT_CHARS && !WINDOWS_DEVICE.test(segment)) {
    return segment;
  }
  let out = "";
  let run = 0;
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i];
    if (RAW.test(ch)) continue;
    out += segment.slice(run, i);
    // Keep a surrogate pair together so it encodes as one 4-byte sequence.
    const width = segment.codePointAt(i)! > 0xffff ? 2 : 1;
    out += escapeBytes(segment.slice(i, i + width));
    i += width - 1;
    run = i + 1;
  }
  out += segment.slice(run);
  if (WINDOWS_DEVICE.test(out)) out = escapeBytes(out[0]) + out.slice(1);
  if (out.length > MAX_SEGMENT_CHARS) {
    let cut = 64;
    // Do not split an escape.
    while (out[cut - 1] === "%" || out[cut - 2] === "%") cut--;
    out = `${out.slice(0, cut)}%%${sha256(segment)}`;
  }
  return out;
}

/** Reverses {@link encodeSegment} for a segment that was not hashed and is valid UTF-16. */
export function decodeSegment(encoded: string): string {
  if (encoded === "%") return "";
  if (encoded.includes("%%")) throw new Error(`Cannot decode hashed segment "${encoded}"`);
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === "%") {
      const hex = encoded.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw new Error(`Bad escape in segment "${encoded}"`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(encoded.charCodeAt(i));
    }
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
}

/**
 * The path of `key`'s object file, relative to the objects directory, with `/` separators.
 * Injective and safe for any string (see the module comment); always ends in `.json`.
 *
 * @example
 * ```ts
 * keyToPath("/registry/core/pods/default/web-0"); // "%/registry/core/pods/default/web-0.json"
 * ```
 */
export function keyToPath(key: string): string {
  const path = key.split("/").map(encodeSegment).join("/") + OBJECT_SUFFIX;
  return path.length > MAX_PATH_CHARS ? `%%/${sha256(key)}${OBJECT_SUFFIX}` : path;
}
