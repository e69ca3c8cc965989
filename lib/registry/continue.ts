/**
 * Continue tokens for chunked lists: opaque to clients, validated by the server. A token
 * carries the revision of the first page (so every page reads the same snapshot), the last key
 * returned, how many items the pages so far returned and how many the list has in all (so a
 * page costs O(page size), not a count of everything after it), and a MAC, so a tampered
 * token is refused with 400.
 *
 * The MAC key belongs to the data directory (see the server), so tokens stay valid across a
 * restart for as long as the history still holds their revision. Revision -1 marks the token of
 * an expired list handed back with the 410: it continues at the newest revision.
 */

import { badRequest } from "../api/mod.ts";

/** Where a continued list picks up. */
export interface ContinuePoint {
  /** The snapshot revision; -1 = the newest (an inconsistent continuation). */
  revision: number;
  /** The last key returned. */
  after: string;
  /** Items returned by the pages before. */
  returned: number;
  /** Items in the whole list at `revision`; -1 when unknown (filtered lists). */
  total: number;
}

interface Token {
  v: 1;
  rv: number;
  start: string;
  n: number;
  t: number;
}

/** A fresh random MAC key (for stores that do not outlive the process). */
export function randomContinueKey(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(32));
}

function mac(key: Uint8Array, data: string): string {
  // FNV-1a over key+data, 2 x 32 bits. Not cryptographic, but tokens only ever address data
  // the client may already list; the check exists to reject edited or truncated tokens.
  let h1 = 0x811c9dc5, h2 = 0x01000193 ^ 0x5bd1e995;
  const feed = (c: number) => {
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  };
  for (const b of key) feed(b);
  for (let i = 0; i < data.length; i++) feed(data.charCodeAt(i));
  return h1.toString(36) + h2.toString(36);
}

function b64url(s: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(s))).replace(/\+/g, "-")
    .replace(/\//g, "_").replace(/=+$/, "");
}

function unb64url(s: string): string {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/** Makes the token for the page after `p.after` in the list of `prefix`. */
export function encodeContinue(key: Uint8Array, prefix: string, p: ContinuePoint): string {
  const token: Token = {
    v: 1,
    rv: p.revision,
    start: p.after.slice(prefix.length),
    n: p.returned,
    t: p.total,
  };
  const body = JSON.stringify(token);
  return b64url(JSON.stringify({ b: body, m: mac(key, body + "\0" + prefix) }));
}

/** Reads a token back; 400 BadRequest when it is malformed, tampered or for another list. */
export function decodeContinue(key: Uint8Array, prefix: string, token: string): ContinuePoint {
  const bad = () => badRequest(`continue key is not valid: "${token.slice(0, 64)}"`);
  let outer: { b?: unknown; m?: unknown };
  let t: Token;
  try {
    outer = JSON.parse(unb64url(token));
    if (typeof outer?.b !== "string" || outer.m !== mac(key, outer.b + "\0" + prefix)) throw 0;
    t = JSON.parse(outer.b);
  } catch {
    throw bad();
  }
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= -1;
  if (
    t.v !== 1 || !Number.isSafeInteger(t.rv) || (t.rv <= 0 && t.rv !== -1) ||
    typeof t.start !== "string" || !count(t.n) || (t.n as number) < 0 || !count(t.t)
  ) {
    throw bad();
  }
  return { revision: t.rv, after: prefix + t.start, returned: t.n, total: t.t };
}
