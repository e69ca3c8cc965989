/**
 * Content negotiation: which representation a client accepts (Accept) and which one it sent
 * (Content-Type). Media type parameters select special forms: `as=Table`,
 * `as=PartialObjectMetadata[List]`, `as=APIGroupDiscoveryList`.
 */

import { notAcceptable, unsupportedMediaType } from "../api/mod.ts";

export type Encoding = "json" | "yaml" | "protobuf";

/** Our protobuf media type, and kube's spelling of it (kubectl's typed commands send that). */
export const PROTOBUF = "application/vnd.platform.protobuf";
export const KUBE_PROTOBUF = "application/vnd.kubernetes.protobuf";

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** What to send back. */
export interface Negotiated {
  encoding: Encoding;
  /** The Content-Type header to answer with. */
  contentType: string;
  /** A transformed form the client asked for, with the group and version it named. */
  as?: { kind: string; group: string; version: string };
}

export const SUPPORTED_OUTPUT = ["application/json", "application/yaml"];
export const SUPPORTED_INPUT = ["application/json", "application/yaml"];
const WITH_PROTOBUF = [...SUPPORTED_OUTPUT, PROTOBUF];

/** Parsed Accept headers: clients send the same few values on every request. */
const parsedAccept = new Map<string, readonly MediaRange[]>();
const PARSED_ACCEPT_MAX = 256;
const ANY: readonly MediaRange[] = [{ type: "*", subtype: "*", params: {}, q: 1 }];

/** Parses an Accept header into ranges, best first (q descending, then header order). The
 * result is shared between requests with the same header: read it, never change it. */
export function parseAccept(header: string | null): readonly MediaRange[] {
  if (!header) return ANY;
  let ranges = parsedAccept.get(header);
  if (!ranges) {
    if (parsedAccept.size >= PARSED_ACCEPT_MAX) parsedAccept.clear();
    ranges = parseAcceptHeader(header);
    parsedAccept.set(header, ranges);
  }
  return ranges;
}

function parseAcceptHeader(header: string): readonly MediaRange[] {
  if (!header.trim()) return ANY;
  const ranges: (MediaRange & { i: number })[] = [];
  header.split(",").forEach((part, i) => {
    const [full, ...rawParams] = part.split(";").map((s) => s.trim());
    if (!full) return;
    const [type, subtype] = full.toLowerCase().split("/");
    if (!type || !subtype) return;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf("=");
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
      if (k === "q") q = Number.isFinite(Number(v)) ? Number(v) : 0;
      else params[k] = v;
    }
    if (q > 0) ranges.push({ type, subtype, params, q, i });
  });
  return ranges.sort((a, b) => b.q - a.q || a.i - b.i);
}

/** Groups accepted as the meta API group in `as=` media types (kubectl says `meta.k8s.io`). */
const META_GROUPS = new Set(["meta.platform.io", "meta.k8s.io"]);
const DISCOVERY_GROUPS = new Set(["apidiscovery.platform.io", "apidiscovery.k8s.io"]);

export interface NegotiateOptions {
  /** The `as=` kinds this endpoint can produce, e.g. `["Table"]` on lists. */
  allowAs?: string[];
  /** The endpoint can answer in protobuf (built-in kinds). */
  protobuf?: boolean;
  /** The endpoint can answer in YAML (default true; watch streams cannot: YAML has no
   * framing for a stream of documents, so kube offers JSON and protobuf only). */
  yaml?: boolean;
}

/** Picks the best representation the client accepts; 406 when none is supported. */
export function negotiateOutput(accept: string | null, opts: NegotiateOptions = {}): Negotiated {
  for (const r of parseAccept(accept)) {
    const enc = encodingOf(r);
    if (!enc || (enc === "yaml" && opts.yaml === false)) continue;
    if (enc === "protobuf") {
      // Tables and other `as=` forms are JSON/YAML only here.
      if (!opts.protobuf || r.params["as"]) continue;
      const type = `${r.type}/${r.subtype}`;
      return {
        encoding: "protobuf",
        contentType: type === KUBE_PROTOBUF ? KUBE_PROTOBUF : PROTOBUF,
      };
    }
    const as = r.params["as"];
    if (as) {
      if (!opts.allowAs?.includes(as)) continue;
      const g = r.params["g"] ?? "";
      const v = r.params["v"] ?? "";
      const groups = as === "APIGroupDiscoveryList" ? DISCOVERY_GROUPS : META_GROUPS;
      if (!groups.has(g)) continue;
      const versions = as === "APIGroupDiscoveryList" ? ["v2", "v2beta1"] : ["v1", "v1beta1"];
      if (!versions.includes(v)) continue;
      const base = enc === "yaml" ? "application/yaml" : "application/json";
      return {
        encoding: enc,
        contentType: `${base};g=${g};v=${v};as=${as}`,
        as: { kind: as, group: g, version: v },
      };
    }
    return { encoding: enc, contentType: enc === "yaml" ? "application/yaml" : "application/json" };
  }
  const supported = opts.protobuf ? WITH_PROTOBUF : SUPPORTED_OUTPUT;
  throw notAcceptable(
    opts.yaml === false ? supported.filter((t) => t !== "application/yaml") : supported,
  );
}

function encodingOf(r: MediaRange): Encoding | undefined {
  if (r.type === "*" && r.subtype === "*") return "json";
  if (r.type !== "application") return undefined;
  if (r.subtype === "*" || r.subtype === "json") return "json";
  if (r.subtype === "yaml") return "yaml";
  if (`application/${r.subtype}` === PROTOBUF || `application/${r.subtype}` === KUBE_PROTOBUF) {
    return "protobuf";
  }
  return undefined;
}

/** The encoding of a request body; 415 for anything else. A missing type is read as JSON. */
export function requestEncoding(
  contentType: string | null,
  opts: { protobuf?: boolean } = {},
): Encoding {
  if (!contentType) return "json";
  const base = contentType.split(";")[0].trim().toLowerCase();
  if (base === "application/json") return "json";
  if (base === "application/yaml" || base === "application/x-yaml" || base === "text/yaml") {
    return "yaml";
  }
  if (opts.protobuf && (base === PROTOBUF || base === KUBE_PROTOBUF)) return "protobuf";
  throw unsupportedMediaType(
    contentType,
    opts.protobuf ? [...SUPPORTED_INPUT, PROTOBUF] : SUPPORTED_INPUT,
  );
}
