/**
 * PEM text (RFC 7468): blocks of base64 DER between `-----BEGIN <label>-----` and
 * `-----END <label>-----` lines, as certificates, keys and CA bundles are written.
 *
 * @module
 */

/** One PEM block: its label (`CERTIFICATE`, `PRIVATE KEY`, …) and DER bytes. */
export interface PemBlock {
  type: string;
  der: Uint8Array<ArrayBuffer>;
}

/** The PEM blocks of `text`, in order; blocks whose base64 is malformed are skipped. */
export function decodePem(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  for (const m of text.matchAll(re)) {
    const body = m[2].replace(/\s+/g, "");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length === 0) continue;
    try {
      out.push({ type: m[1], der: Uint8Array.from(atob(body), (c) => c.charCodeAt(0)) });
    } catch {
      // not base64
    }
  }
  return out;
}

/** DER bytes as a PEM block with 64-character lines. */
export function encodePem(type: string, der: ArrayBuffer | Uint8Array): string {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  const lines = btoa(bin).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${type}-----\n${lines.join("\n")}\n-----END ${type}-----\n`;
}
