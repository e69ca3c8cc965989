/**
 * URL parsing with Go's net/url rules, which Kubernetes' URL library exposes: no normalisation
 * (WHATWG's URL would lowercase hosts, add "/" paths and re-encode), an absolute URI or an
 * absolute path for a request URI, Go's escaping for the escaped path, Go's query splitting.
 */

export interface GoUrl {
  scheme: string;
  /** "host[:port]" as written (percent-decoded). */
  host: string;
  /** The decoded path, and the path as written when that differs from the encoded path. */
  path: string;
  rawPath: string;
  rawQuery: string;
}

type Mode = "path" | "host" | "zone" | "userinfo" | "query" | "fragment";

const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);
const HOST_ALLOWED = "!$&'()*+,;=:[]<>\"";

function shouldEscape(c: string, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  if ((mode === "host" || mode === "zone") && HOST_ALLOWED.includes(c)) return false;
  if ("-_.~".includes(c)) return false;
  if ("$&+,/:;=?@".includes(c)) {
    switch (mode) {
      case "path":
        return c === "?";
      case "userinfo":
        return "@/?:".includes(c);
      case "query":
        return true;
      case "fragment":
        return false;
    }
  }
  if (mode === "fragment" && "!()*".includes(c)) return false;
  return true;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

function escape(s: string, mode: Mode): string {
  let out = "";
  for (const ch of s) {
    if (ch < "\x80" && !shouldEscape(ch, mode)) {
      out += ch;
      continue;
    }
    for (const b of utf8.encode(ch)) out += "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

function unescape(s: string, mode: Mode): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length;) {
    const c = s[i];
    if (c === "%") {
      const h = s.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(h)) throw new Error(`invalid URL escape "${s.slice(i, i + 3)}"`);
      // A host may only percent-encode non-ASCII bytes (and "%" itself).
      if (mode === "host" && parseInt(h, 16) < 0x80 && h !== "25") {
        throw new Error(`invalid URL escape "%${h}"`);
      }
      bytes.push(parseInt(h, 16));
      i += 3;
      continue;
    }
    if ((mode === "host" || mode === "zone") && c < "\x80" && shouldEscape(c, mode)) {
      throw new Error(`invalid character "${c}" in host name`);
    }
    if (c === "+" && mode === "query") bytes.push(0x20);
    else bytes.push(...utf8.encode(s.codePointAt(i)! > 0xffff ? s.slice(i, i + 2) : c));
    i += s.codePointAt(i)! > 0xffff ? 2 : 1;
  }
  return utf8Decoder.decode(new Uint8Array(bytes));
}

const validOptionalPort = (port: string) => port === "" || /^:\d*$/.test(port);

function parseHost(host: string): string {
  if (host.startsWith("[")) {
    const end = host.lastIndexOf("]");
    if (end < 0) throw new Error("missing ']' in host");
    const colonPort = host.slice(end + 1);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port "${colonPort}" after host`);
    const zone = host.slice(0, end).indexOf("%25");
    if (zone >= 0) {
      return unescape(host.slice(0, zone), "host") + unescape(host.slice(zone, end), "zone") +
        unescape(host.slice(end), "host");
    }
  } else {
    const colon = host.lastIndexOf(":");
    if (colon >= 0 && !validOptionalPort(host.slice(colon))) {
      throw new Error(`invalid port "${host.slice(colon)}" after host`);
    }
  }
  return unescape(host, "host");
}

function parseAuthority(authority: string): string {
  const at = authority.lastIndexOf("@");
  const host = parseHost(authority.slice(at + 1));
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) {
      throw new Error("net/url: invalid userinfo");
    }
    unescape(userinfo, "userinfo");
  }
  return host;
}

/** The scheme and the rest, when the string starts with one. */
function splitScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return ["", raw];
      continue;
    }
    if (c === ":") {
      if (i === 0) throw new Error("missing protocol scheme");
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ["", raw];
  }
  return ["", raw];
}

function parse(raw: string, viaRequest: boolean): GoUrl {
  if ([...raw].some((c) => c < " " || c === "\x7f")) {
    throw new Error("net/url: invalid control character in URL");
  }
  if (raw === "" && viaRequest) throw new Error("empty url");
  const url: GoUrl = { scheme: "", host: "", path: "", rawPath: "", rawQuery: "" };
  if (raw === "*") return { ...url, path: "*" };
  const [scheme, afterScheme] = splitScheme(raw);
  url.scheme = scheme.toLowerCase();
  let rest = afterScheme;
  if (rest.endsWith("?") && rest.indexOf("?") === rest.length - 1) {
    rest = rest.slice(0, -1);
  } else if (rest.includes("?")) {
    url.rawQuery = rest.slice(rest.indexOf("?") + 1);
    rest = rest.slice(0, rest.indexOf("?"));
  }
  if (!rest.startsWith("/")) {
    if (url.scheme !== "") return url; // opaque, e.g. "mailto:someone"
    if (viaRequest) throw new Error("invalid URI for request");
    if (rest.split("/")[0].includes(":")) {
      throw new Error("first path segment in URL cannot contain colon");
    }
  }
  if ((url.scheme !== "" || !viaRequest && !rest.startsWith("///")) && rest.startsWith("//")) {
    const slash = rest.indexOf("/", 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? "" : rest.slice(slash);
    url.host = parseAuthority(authority);
  }
  url.path = unescape(rest, "path");
  url.rawPath = escape(url.path, "path") === rest ? "" : rest;
  return url;
}

function wrapError<T>(raw: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw new Error(`parse ${JSON.stringify(raw)}: ${(err as Error).message}`);
  }
}

/** Go's url.ParseRequestURI: an absolute URI or an absolute path, no fragment handling. */
export function parseRequestUri(raw: string): GoUrl {
  return wrapError(raw, () => parse(raw, true));
}

/** Go's url.Parse: the fragment (checked, then dropped) after the first "#". */
export function parseUrl(raw: string): GoUrl {
  return wrapError(raw, () => {
    const hash = raw.indexOf("#");
    if (hash >= 0) unescape(raw.slice(hash + 1), "fragment");
    return parse(hash < 0 ? raw : raw.slice(0, hash), false);
  });
}

/** Go's URL.EscapedPath. */
export function escapedPath(u: GoUrl): string {
  if (u.rawPath !== "" && validEncoded(u.rawPath)) {
    try {
      if (unescape(u.rawPath, "path") === u.path) return u.rawPath;
    } catch {
      // fall through to escaping the path
    }
  }
  return u.path === "*" ? "*" : escape(u.path, "path");
}

function validEncoded(s: string): boolean {
  for (const c of s) {
    if ("!$&'()*+,;=:@[]%".includes(c)) continue;
    if (c >= "\x80" || shouldEscape(c, "path")) return false;
  }
  return true;
}

/** Go's splitHostPort as used by URL.Hostname and URL.Port. */
export function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = "";
  const colon = host.lastIndexOf(":");
  if (colon >= 0 && validOptionalPort(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return [host, port];
}

/** Go's url.ParseQuery, keeping what parses: repeated keys collect their values in order. */
export function parseQuery(rawQuery: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of rawQuery.split("&")) {
    if (pair === "" || pair.includes(";")) continue;
    const eq = pair.indexOf("=");
    try {
      const key = unescape(eq < 0 ? pair : pair.slice(0, eq), "query");
      const value = unescape(eq < 0 ? "" : pair.slice(eq + 1), "query");
      out.set(key, [...(out.get(key) ?? []), value]);
    } catch {
      // Go skips pairs that do not unescape.
    }
  }
  return out;
}
