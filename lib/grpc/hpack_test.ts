/**
 * HPACK against the examples of RFC 7541 Appendix C (Huffman-coded requests, and responses
 * that evict from a 256-byte dynamic table), the Huffman code's own shape, and our encoder's
 * blocks read back by the decoder.
 */

import assert from "node:assert/strict";
import { encodeHeaders, HpackDecoder, HpackError } from "./hpack.ts";
import { CODE_LENGTHS, CODES, huffmanDecode, HuffmanError } from "./huffman.ts";

const hex = (s: string) =>
  Uint8Array.from(s.replace(/\s+/g, "").match(/../g)!, (h) => parseInt(h, 16));

Deno.test("hpack: RFC 7541 C.4, requests with Huffman coding, share one dynamic table", () => {
  const d = new HpackDecoder();
  assert.deepEqual(d.decode(hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")), [
    [":method", "GET"],
    [":scheme", "http"],
    [":path", "/"],
    [":authority", "www.example.com"],
  ]);
  assert.deepEqual(d.decode(hex("8286 84be 5886 a8eb 1064 9cbf")), [
    [":method", "GET"],
    [":scheme", "http"],
    [":path", "/"],
    [":authority", "www.example.com"],
    ["cache-control", "no-cache"],
  ]);
  assert.deepEqual(
    d.decode(hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")),
    [
      [":method", "GET"],
      [":scheme", "https"],
      [":path", "/index.html"],
      [":authority", "www.example.com"],
      ["custom-key", "custom-value"],
    ],
  );
});

Deno.test("hpack: RFC 7541 C.6, responses evicting from a 256-byte table", () => {
  const d = new HpackDecoder(256);
  // The server shrinks the table to what the example uses (a size update within our bound).
  assert.deepEqual(d.decode(Uint8Array.of(0x3f, 0xe1, 0x01)), []);
  const date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
  assert.deepEqual(
    d.decode(hex(
      "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
    )),
    [
      [":status", "302"],
      ["cache-control", "private"],
      ["date", date1],
      ["location", "https://www.example.com"],
    ],
  );
  assert.deepEqual(d.decode(hex("4883 640e ffc1 c0bf")), [
    [":status", "307"],
    ["cache-control", "private"],
    ["date", date1],
    ["location", "https://www.example.com"],
  ]);
  assert.deepEqual(
    d.decode(hex(
      "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
    )),
    [
      [":status", "200"],
      ["cache-control", "private"],
      ["date", "Mon, 21 Oct 2013 20:13:22 GMT"],
      ["location", "https://www.example.com"],
      ["content-encoding", "gzip"],
      ["set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"],
    ],
  );
});

Deno.test("hpack: a table size over our bound, a missing entry and bad Huffman are errors", () => {
  assert.throws(() => new HpackDecoder(256).decode(Uint8Array.of(0x3f, 0xe2, 0x1f)), HpackError);
  assert.throws(() => new HpackDecoder().decode(Uint8Array.of(0xbe)), HpackError);
  // "a" (00011) padded with zeros instead of ones.
  assert.throws(() => huffmanDecode(Uint8Array.of(0x18), 0, 1), HuffmanError);
  assert.throws(() => new HpackDecoder().decode(Uint8Array.of(0x40, 0x81, 0x18, 0x00)), HpackError);
});

Deno.test("huffman: the canonical code from the lengths is RFC 7541's, and complete", () => {
  const spot: [number, number, number][] = [
    [0, 0x1ff8, 13],
    [48, 0x0, 5], // '0'
    [97, 0x3, 5], // 'a'
    [92, 0x7fff0, 19], // '\'
    [127, 0xffffffc, 28],
    [195, 0x7fff1, 19],
    [255, 0x3ffffee, 26],
    [256, 0x3fffffff, 30], // EOS
  ];
  for (const [sym, code, len] of spot) {
    assert.equal(CODES[sym], code, `code of ${sym}`);
    assert.equal(CODE_LENGTHS[sym], len, `length of ${sym}`);
  }
  assert.equal(CODE_LENGTHS.reduce((sum, len) => sum + 2 ** -len, 0), 1, "Kraft sum");
});

Deno.test("hpack: what the encoder writes, the decoder reads back", () => {
  const fields: [string, string][] = [
    [":method", "POST"],
    [":path", "/etcdserverpb.KV/Txn"],
    ["content-type", "application/grpc"],
    ["grpc-timeout", "30000m"],
    ["x-long", "v".repeat(300)],
  ];
  assert.deepEqual(new HpackDecoder().decode(encodeHeaders(fields)), fields);
});
