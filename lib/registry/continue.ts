/**
 * Continue tokens for chunked lists: opaque to clients, validated by the server. A token
 * carries the revision of the first page (so every page reads the same snapshot), the last key
 * returned, and a MAC so a tampered token is refused with 400.
 */

import { badRequest } from "../api/errors.ts";

interface Token {
  v: 1;
  rv: number;
  start: string;
}

// One random key per process: tokens are short-lived (they expire with the history window).
const KEY_BYTES = crypto.getRandomValues(new Uint8Array(32));

function mac(data: string): string {
  // FNV-1a over key+data, 2 x 32 bits. Not cryptographic, but tokens only ever address data
  // the client may already list; the check exists to reject edited or truncated tokens.
  let h1 = 0x811c9dc5, h2 = 0x01000193 ^ 0x5bd1e995;
  const feed = (c: number) => {
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  };
  for (const b of KEY_BYTES) feed(b);
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

/** Makes the token for the page after `after` in the list of `prefix` at `revision`. */
export function encodeContinue(p: { revision: number; after: string; prefix: string }): string {
  const start = p.after.slice(p.prefix.length);
  const body = JSON.stringify({ v: 1, rv: p.revision, start } satisfies Token);
  return b64url(JSON.stringify({ b: body, m: mac(body + "\0" + p.prefix) }));
}

/** Reads a token back; 400 BadRequest when it is malformed, tampered or for another list. */
export function decodeContinue(token: string, prefix: string): { revision: number; after: string } {
  const bad = () => badRequest(`continue key is not valid: "${token.slice(0, 64)}"`);
  let outer: { b?: unknown; m?: unknown };
  try {
    outer = JSON.parse(unb64url(token));
  } catch {
    throw bad();
  }
  if (typeof outer?.b !== "string" || outer.m !== mac(outer.b + "\0" + prefix)) throw bad();
  const t = JSON.parse(outer.b) as Token;
  if (t.v !== 1 || !Number.isSafeInteger(t.rv) || t.rv <= 0 || typeof t.start !== "string") {
    throw bad();
  }
  return { revision: t.rv, after: prefix + t.start };
}
