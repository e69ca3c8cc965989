/**
 * Encoding figures for `deno task bench` (see bench/README.md): requests/s and response bytes of
 * GETs of single objects and of the whole list of 1,000 configmaps, served as JSON, YAML and
 * protobuf (`Accept`), with JSON as the baseline.
 *
 * The load itself is the caller's `measure()` (wrk when installed), passed in, so these figures
 * use the same client as every other load figure.
 */

import { parse as parseYaml } from "yaml";
import { decodeObject, PROTOBUF_MEDIA_TYPE } from "../lib/codec/mod.ts";
import type { Api } from "./harness.ts";
import { createNamespace } from "./namespace_fill.ts";
import type { WrkRequest } from "./wrk.ts";
import type { Row } from "./harness.ts";
import { ROOT_CA_CONFIGMAP } from "../lib/controllers/namespace_defaults.ts";

/** What one load run reports (the subset of main.ts's `LoadResult` used here). */
export interface EncodingLoad {
  perSec: number;
  errors: number;
  firstError?: string;
}

export interface EncodingOptions {
  api: Api;
  namespace: string;
  /** How many configmaps to create and list. */
  count: number;
  /** Measurement window of each run, ms. */
  ms: number;
  measure: (
    concurrency: number,
    ms: number,
    req: WrkRequest & { expected: number },
  ) => Promise<EncodingLoad>;
  settle: (path: string, label: string) => Promise<unknown>;
  note: (msg: string) => void;
}

export const ENCODINGS = [
  { label: "JSON", accept: "application/json" },
  { label: "YAML", accept: "application/yaml" },
  { label: "protobuf", accept: PROTOBUF_MEDIA_TYPE },
] as const;

export type EncodingLabel = (typeof ENCODINGS)[number]["label"];

export interface EncodingResult {
  label: EncodingLabel;
  accept: string;
  /** GETs/s of single objects (32 connections, cycling over all names). */
  getPerSec: number;
  /** Mean response body bytes of a single GET. */
  getBytes: number;
  /** GETs/s of the whole list (8 connections). */
  listPerSec: number;
  /** Response body bytes of the list. */
  listBytes: number;
  errors: number;
}

export interface EncodingFigures {
  /** Configmaps created per second (64 concurrent fetch loops), for the log. */
  fillPerSec: number;
  results: EncodingResult[];
  problems: string[];
}

export const GET_CONNECTIONS = 32;
export const LIST_CONNECTIONS = 8;

/** About 200 bytes of data per configmap, in two keys, like a small application config. */
function configMap(i: number): string {
  const name = `cm-${String(i).padStart(4, "0")}`;
  return JSON.stringify({
    metadata: {
      name,
      labels: { app: "bench", tier: i % 2 ? "backend" : "frontend", index: String(i) },
    },
    data: {
      "app.properties": `name=${name}\nlog.level=info\nmax.connections=${100 + (i % 50)}\n` +
        "feature.flags=alpha,beta\n",
      "settings.json": `{"replicas":${1 + (i % 5)},"region":"eu-west-1","owner":"team-${
        i % 7
      }","timeoutSeconds":30,"retry":true}`,
    },
  });
}

async function fetchBody(
  api: Api,
  path: string,
  accept: string,
): Promise<{ bytes: Uint8Array; contentType: string }> {
  const res = await fetch(api.url + path, {
    client: api.client,
    headers: { ...api.headers, Accept: accept },
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) {
    throw new Error(
      `GET ${path} (${accept}) → ${res.status}: ${
        new TextDecoder().decode(bytes.subarray(0, 300))
      }`,
    );
  }
  return { bytes, contentType: res.headers.get("content-type") ?? "" };
}

/** The number of items in a list body of that encoding, besides the namespace's
 * kube-root-ca.crt (the server's own). */
function countItems(label: EncodingLabel, bytes: Uint8Array): number {
  const parsed = label === "protobuf"
    ? decodeObject(bytes)
    : label === "YAML"
    ? parseYaml(new TextDecoder().decode(bytes))
    : JSON.parse(new TextDecoder().decode(bytes));
  if (!Array.isArray(parsed?.items)) return -1;
  return parsed.items.filter((i: { metadata?: { name?: string } }) =>
    i.metadata?.name !== ROOT_CA_CONFIGMAP
  ).length;
}

/**
 * Creates `count` configmaps in a namespace of their own, then for each encoding measures
 * single GETs (cycling over the names) and full-list GETs, and the response sizes.
 */
export async function encodingFigures(o: EncodingOptions): Promise<EncodingFigures> {
  const problems: string[] = [];
  const collection = `/api/v1/namespaces/${o.namespace}/configmaps`;
  await createNamespace(o.api, o.namespace);

  const fillStart = performance.now();
  let next = 0;
  let fillErrors = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < o.count) {
      const i = next++;
      const res = await fetch(o.api.url + collection, {
        method: "POST",
        client: o.api.client,
        headers: { ...o.api.headers, "Content-Type": "application/json" },
        body: configMap(i),
      }).catch((e) => String(e));
      if (typeof res === "string" || res.status !== 201) {
        const what = typeof res === "string" ? res : `${res.status}: ${await res.text()}`;
        if (fillErrors++ === 0) problems.push(`filling ${o.namespace}: ${what.slice(0, 300)}`);
      } else await res.body?.cancel();
    }
  }));
  const fillPerSec = o.count / ((performance.now() - fillStart) / 1000);
  o.note(`created ${o.count} configmaps in ${o.namespace} (${Math.round(fillPerSec)}/s)`);
  const paths = Array.from(
    { length: o.count },
    (_, i) => `${collection}/cm-${String(i).padStart(4, "0")}`,
  );
  await o.settle(paths[0], `after the ${o.count} configmaps of the encoding figures`);

  const results: EncodingResult[] = [];
  for (const { label, accept } of ENCODINGS) {
    // sizes (and a check that the server really answers in that encoding)
    let getBytes = 0;
    const sample = paths.filter((_, i) => i % Math.ceil(o.count / 50) === 0);
    for (const path of sample) {
      const { bytes, contentType } = await fetchBody(o.api, path, accept);
      if (!contentType.startsWith(accept)) {
        problems.push(`GET ${path} with Accept ${accept} answered ${contentType}`);
      }
      getBytes += bytes.length;
    }
    getBytes /= sample.length;
    const list = await fetchBody(o.api, collection, accept);
    const items = countItems(label, list.bytes);
    if (items !== o.count) {
      problems.push(`the ${label} list of ${o.namespace} has ${items} items, not ${o.count}`);
    }

    const headers = { Accept: accept };
    const get = await o.measure(GET_CONNECTIONS, o.ms, {
      method: "GET",
      paths,
      headers,
      expected: 200,
    });
    const lst = await o.measure(LIST_CONNECTIONS, o.ms, {
      method: "GET",
      paths: [collection],
      headers,
      expected: 200,
    });
    for (const [what, r] of [["gets", get], ["lists", lst]] as const) {
      if (r.errors) problems.push(`${label} ${what}: ${r.errors} errors, first: ${r.firstError}`);
    }
    o.note(
      `${label}: ${Math.round(get.perSec)} gets/s (${Math.round(getBytes)} B each), ` +
        `${lst.perSec.toFixed(1)} lists/s of ${o.count} (${list.bytes.length} B each)`,
    );
    // the server may still be answering requests the load sent (a YAML list takes long): let it
    // finish, so that the next encoding starts on an idle server
    await o.settle(paths[0], `after the ${label} figures`);
    results.push({
      label,
      accept,
      getPerSec: get.perSec,
      getBytes,
      listPerSec: lst.perSec,
      listBytes: list.bytes.length,
      errors: get.errors + lst.errors,
    });
  }
  return { fillPerSec, results, problems };
}

/** The table rows: req/s and bytes of gets and lists per encoding, against JSON. */
export function encodingRows(
  figs: EncodingFigures,
  count: number,
  fmt: (n: number, digits?: number) => string,
): Row[] {
  const json = figs.results.find((r) => r.label === "JSON");
  const rows: Row[] = [];
  const n = fmt(count);
  const kinds = [
    {
      figure: (l: string) => `get 1 of ${n} configmaps, ${GET_CONNECTIONS} clients, ${l}: req/s`,
      value: (r: EncodingResult) => r.getPerSec,
      digits: 0,
    },
    {
      figure: (l: string) => `list of ${n} configmaps, ${LIST_CONNECTIONS} clients, ${l}: req/s`,
      value: (r: EncodingResult) => r.listPerSec,
      digits: 1,
      target: "protobuf > 1× JSON",
    },
    {
      figure: (l: string) => `get 1 of ${n} configmaps, ${l}: bytes/response`,
      value: (r: EncodingResult) => r.getBytes,
      digits: 0,
    },
    {
      figure: (l: string) => `list of ${n} configmaps, ${l}: bytes/response`,
      value: (r: EncodingResult) => r.listBytes,
      digits: 0,
    },
  ];
  for (const k of kinds) {
    for (const r of figs.results) {
      const isJson = r === json;
      const v = k.value(r);
      const b = json ? k.value(json) : NaN;
      const targeted = k.target !== undefined && r.label === "protobuf";
      rows.push({
        figure: k.figure(r.label),
        value: fmt(v, k.digits),
        baseline: isJson ? "—" : `JSON ${fmt(b, k.digits)}`,
        ratio: isJson ? "—" : `${fmt(v / b, 2)}×`,
        target: targeted ? "> 1× JSON" : "—",
        met: targeted ? (v > b && r.errors === 0 && json?.errors === 0 ? "yes" : "**no**") : "—",
      });
    }
  }
  return rows;
}
