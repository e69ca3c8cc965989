/**
 * Filling a namespace with configmaps as fast as the client goes, and paging through them: the
 * watch, paging and etcd figures' setup and their paging figure.
 */

import type { Api } from "./harness.ts";
import { haveWrk } from "./wrk.ts";
import { ROOT_CA_CONFIGMAP } from "../lib/controllers/namespace_defaults.ts";

async function check(res: Response, what: string, ...expected: number[]): Promise<void> {
  if (expected.includes(res.status)) return;
  throw new Error(`${what} → ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

/** Creates namespace `name`. */
export async function createNamespace(api: Api, name: string): Promise<void> {
  const res = await fetch(`${api.url}/api/v1/namespaces`, {
    method: "POST",
    client: api.client,
    headers: { ...api.headers, "Content-Type": "application/json" },
    body: JSON.stringify({ metadata: { name } }),
  });
  await check(res, `create namespace ${name}`, 201);
  await res.body?.cancel();
}

/** The resourceVersion of a (one-item) list of `collection`: where a watch starts. */
export async function listRevision(api: Api, collection: string): Promise<string> {
  const res = await fetch(`${api.url}${collection}?limit=1`, {
    client: api.client,
    headers: api.headers,
  });
  await check(res, `list ${collection}`, 200);
  return (await res.json()).metadata.resourceVersion;
}

/** Lua string literal. */
function lua(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, "\\n")}"`;
}

export interface FillResult {
  created: number;
  errors: number;
  firstError?: string;
  perSec: number;
}

/**
 * Creates configmaps `cm-000000` … in `namespace` (`count` of them) as fast as the client
 * goes: with wrk (32 connections; each request numbers its own name, and once all are sent the
 * connections idle on `/livez` until the last create is answered) when installed, else with 64
 * concurrent fetch loops.
 */
export async function fill(api: Api, namespace: string, count: number): Promise<FillResult> {
  const collection = `/api/v1/namespaces/${namespace}/configmaps`;
  const payload = "x".repeat(120);
  const bodyOf = (i: number) =>
    `{"metadata":{"name":"cm-${
      String(i).padStart(6, "0")
    }","labels":{"app":"bench-page"}},"data":{"payload":"${payload}"}}`;
  const [before, after] = bodyOf(0).split("cm-000000");
  const start = performance.now();
  if (await haveWrk()) return await fillWithWrk(api, collection, count, before, after);
  let next = 0;
  let created = 0;
  let errors = 0;
  let firstError: string | undefined;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < count) {
      const i = next++;
      try {
        const res = await fetch(api.url + collection, {
          method: "POST",
          client: api.client,
          headers: { ...api.headers, "Content-Type": "application/json" },
          body: bodyOf(i),
        });
        await check(res, `POST ${collection}`, 201);
        await res.body?.cancel();
        created++;
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  }));
  return { created, errors, firstError, perSec: created / ((performance.now() - start) / 1000) };
}

/**
 * wrk (one thread, 32 connections) POSTing `before + name + after` for names `cm-000000` … in
 * order, then idling on `/livez` until every create is answered. wrk always runs for its whole
 * duration, so the script prints a line once the last create is answered and this stops wrk
 * with SIGINT (after which it reports as usual).
 */
async function fillWithWrk(
  api: Api,
  collection: string,
  count: number,
  before: string,
  after: string,
): Promise<FillResult> {
  const start = performance.now();
  const headers = { ...api.headers, "Content-Type": "application/json" };
  const script = [
    `local post, get = {}, {}`,
    ...Object.entries(headers).map(([k, v]) => `post[${lua(k)}] = ${lua(v)}`),
    // Globals of the thread's Lua state, read back in done(), which runs in another state.
    `count, sent, answered, created, first = ${count}, 0, 0, 0, "none"`,
    // wrk calls request() once before the run to check what it returns and sends nothing of
    // it: that call must not use up a name.
    `local checked = false`,
    `request = function()`,
    `  if sent >= count or not checked then`,
    `    checked = true`,
    `    return wrk.format("GET", "/livez", get)`,
    `  end`,
    `  local name = string.format("cm-%06d", sent)`,
    `  sent = sent + 1`,
    `  return wrk.format("POST", ${lua(collection)}, post, ${lua(before)} .. name .. ${
      lua(after)
    })`,
    `end`,
    `response = function(status, headers, body)`,
    `  if status == 200 then return end`,
    `  answered = answered + 1`,
    `  if status == 201 then created = created + 1`,
    `  elseif first == "none" then`,
    `    first = status .. " " .. string.gsub(string.sub(body, 1, 200), "\\n", " ")`,
    `  end`,
    `  if answered == count then`,
    `    io.write("all answered\\n")`,
    `    io.flush()`,
    `  end`,
    `end`,
    `local threads = {}`,
    `setup = function(thread) table.insert(threads, thread) end`,
    `done = function(summary)`,
    `  local t, e = threads[1], summary.errors`,
    `  io.write("fill: ", t:get("answered"), " ", t:get("created"), " socket errors: connect ",`,
    `    e.connect, ", read ", e.read, ", write ", e.write, ", timeout ", e.timeout,`,
    `    "; first: ", t:get("first"), "\\n")`,
    `end`,
  ].join("\n") + "\n";
  const file = await Deno.makeTempFile({ prefix: "bench-fill-", suffix: ".lua" });
  try {
    await Deno.writeTextFile(file, script);
    const proc = new Deno.Command("wrk", {
      args: [
        "-t1",
        "-c32",
        `-d${Math.ceil(count / 200) + 10}s`, // the longest it may take (it stops when done)
        "--timeout",
        "10s",
        "-s",
        file,
        api.url + collection,
      ],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(proc.stderr).text();
    let out = "";
    let stopped = false;
    for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
      out += chunk;
      if (!stopped && out.includes("all answered\n")) {
        stopped = true;
        proc.kill("SIGINT");
      }
    }
    const status = await proc.status;
    const m = /^fill: (\d+) (\d+) socket errors: (.*); first: (.*)$/m.exec(out);
    if (!m) throw new Error(`wrk failed (exit ${status.code}): ${out}${await stderr}`);
    const created = Number(m[2]);
    const socketErrors = /[1-9]/.test(m[3]) ? `socket errors: ${m[3]}` : undefined;
    return {
      created,
      errors: count - created,
      firstError: m[4] !== "none" ? m[4] : socketErrors,
      perSec: created / ((performance.now() - start) / 1000),
    };
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

// --- paging ----------------------------------------------------------------------------------

export interface PageResult {
  ms: number;
  pages: number;
  items: number;
  /** Distinct list-metadata resourceVersions seen over the pages (1 when consistent). */
  revisions: string[];
  /** Items whose name did not sort after the previous item's (repeats or disorder). */
  outOfOrder: number;
}

/**
 * Lists `collection` in pages of `limit` (`?limit=` then `&continue=` until no token), timed
 * from the first request to the last page's parsed body.
 */
export async function pageThrough(
  api: Api,
  collection: string,
  limit: number,
): Promise<PageResult> {
  const revisions = new Set<string>();
  let items = 0;
  let pages = 0;
  let outOfOrder = 0;
  let last = "";
  let token: string | undefined;
  const start = performance.now();
  do {
    const res = await fetch(
      `${api.url}${collection}?limit=${limit}${
        token ? `&continue=${encodeURIComponent(token)}` : ""
      }`,
      { client: api.client, headers: api.headers },
    );
    await check(res, `page ${pages + 1} of ${collection}`, 200);
    const list = await res.json();
    pages++;
    revisions.add(list.metadata.resourceVersion);
    for (const item of list.items) {
      const name: string = item.metadata.name;
      if (name <= last) outOfOrder++;
      last = name;
      // The namespace's kube-root-ca.crt is the server's, not one of the filled objects.
      if (name !== ROOT_CA_CONFIGMAP) items++;
    }
    token = list.metadata.continue || undefined;
  } while (token);
  return { ms: performance.now() - start, pages, items, revisions: [...revisions], outOfOrder };
}
