/**
 * A minimal HTTP/1.1 keep-alive client over one TLS connection, for benchmarks whose request
 * bodies are over a kilobyte. Deno's `fetch` writes such a request's head and body as two
 * segments, and the second waits for the server's delayed ACK (Nagle): ~40 ms per request at
 * one client, which would measure the client, not the server. Here each request goes out in
 * one write. Responses are read whole (Content-Length or chunked).
 */

const CRLF = "\r\n";

export class RawHttp {
  readonly #conn: Deno.TlsConn;
  readonly #host: string;
  #buf: Uint8Array<ArrayBuffer> = new Uint8Array(0);

  private constructor(conn: Deno.TlsConn, host: string) {
    this.#conn = conn;
    this.#host = host;
  }

  static async connect(url: string, caPem: string): Promise<RawHttp> {
    const u = new URL(url);
    const conn = await Deno.connectTls({
      hostname: u.hostname,
      port: Number(u.port),
      caCerts: [caPem],
    });
    return new RawHttp(conn, u.host);
  }

  /** Sends one request and returns its status and body text. */
  async request(
    method: string,
    path: string,
    headers: Record<string, string>,
    body = "",
  ): Promise<{ status: number; body: string }> {
    const payload = new TextEncoder().encode(body);
    const head = `${method} ${path} HTTP/1.1${CRLF}Host: ${this.#host}${CRLF}` +
      Object.entries(headers).map(([k, v]) => `${k}: ${v}${CRLF}`).join("") +
      `Content-Length: ${payload.length}${CRLF}${CRLF}`;
    const headBytes = new TextEncoder().encode(head);
    const out = new Uint8Array(headBytes.length + payload.length);
    out.set(headBytes);
    out.set(payload, headBytes.length);
    for (let off = 0; off < out.length;) off += await this.#conn.write(out.subarray(off));
    return await this.#response();
  }

  close(): void {
    try {
      this.#conn.close();
    } catch { /* closed already */ }
  }

  async #response(): Promise<{ status: number; body: string }> {
    let end: number;
    while ((end = indexOf(this.#buf, "\r\n\r\n")) < 0) await this.#fill();
    const head = new TextDecoder().decode(this.#buf.subarray(0, end));
    this.#buf = this.#buf.subarray(end + 4);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let body: Uint8Array;
    if (length) {
      body = await this.#take(Number(length[1]));
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const parts: Uint8Array[] = [];
      for (;;) {
        let eol: number;
        while ((eol = indexOf(this.#buf, CRLF)) < 0) await this.#fill();
        const size = parseInt(new TextDecoder().decode(this.#buf.subarray(0, eol)), 16);
        this.#buf = this.#buf.subarray(eol + 2);
        const chunk = await this.#take(size + 2);
        if (size === 0) break;
        parts.push(chunk.subarray(0, size));
      }
      body = concat(parts);
    } else {
      body = new Uint8Array(0);
    }
    return { status, body: new TextDecoder().decode(body) };
  }

  async #take(n: number): Promise<Uint8Array> {
    while (this.#buf.length < n) await this.#fill();
    const out = this.#buf.slice(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }

  async #fill(): Promise<void> {
    const chunk = new Uint8Array(64 * 1024);
    const n = await this.#conn.read(chunk);
    if (n === null) throw new Error("connection closed by the server");
    this.#buf = concat([this.#buf, chunk.subarray(0, n)]);
  }
}

function indexOf(buf: Uint8Array, text: string): number {
  const needle = new TextEncoder().encode(text);
  outer: for (let i = 0; i <= buf.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (buf[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
