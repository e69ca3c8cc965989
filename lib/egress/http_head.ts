/**
 * Reading the head of an HTTP/1 message (request or response) off a connection: its lines up
 * to the blank line, and the bytes read past it.
 *
 * @module
 */

/** Longest head read; a longer one is refused. */
export const MAX_HEAD_BYTES = 16 * 1024;

export interface Head {
  /** The start line, then the header lines, without line ends. */
  lines: string[];
  /** Bytes read after the head (the start of the body or of a tunnel). */
  rest: Uint8Array;
}

/**
 * Reads until the blank line ending the head. Resolves to undefined when the connection ends
 * before a byte came.
 *
 * @throws {Error} when the head is longer than {@link MAX_HEAD_BYTES} or the connection ends
 * in its middle.
 */
export async function readHead(conn: Deno.Conn): Promise<Head | undefined> {
  const buf = new Uint8Array(MAX_HEAD_BYTES);
  let size = 0;
  for (;;) {
    const n = await conn.read(buf.subarray(size));
    if (n === null) {
      if (size === 0) return undefined;
      throw new Error("the connection ended in the middle of an HTTP head");
    }
    const from = Math.max(0, size - 3);
    size += n;
    const end = findBlankLine(buf, from, size);
    if (end >= 0) {
      const text = new TextDecoder().decode(buf.subarray(0, end));
      return { lines: text.split("\r\n"), rest: buf.slice(end + 4, size) };
    }
    if (size === buf.length) throw new Error(`an HTTP head longer than ${MAX_HEAD_BYTES} bytes`);
  }
}

/** The index of the first `\r\n\r\n` in buf[from, to), or -1. */
function findBlankLine(buf: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 3 < to; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}

/** The value of header `name` (case-insensitive) among head lines, or undefined. */
export function headerValue(lines: string[], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === lower) {
      return line.slice(colon + 1).trim();
    }
  }
  return undefined;
}
