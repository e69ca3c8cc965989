// deno-lint-ignore-file no-explicit-any
/**
 * Crash safety, black-box: the real `platform serve` runs as a child process on a file store,
 * 16 concurrent writers create, update and delete configmaps, and the server is SIGKILLed
 * mid-load several times, restarting on the same data directory each time.
 *
 * After every restart:
 *  - every acknowledged write (201/200 received) is visible with exactly the acknowledged
 *    content and resourceVersion, unless a later write to the same object, whose request was
 *    sent, is visible instead; acknowledged deletes stay deleted;
 *  - nothing is half-visible: every object parses, has the expected shape (its checksum
 *    matches) and is either acknowledged or the content of a write that was in flight;
 *  - revisions never go back: the list resourceVersion is ≥ the highest acknowledged revision,
 *    no two visible objects share a revision, and every write acknowledged after the restart
 *    gets a revision above everything acknowledged or visible before it.
 *
 * Each object belongs to one writer, which sends one request at a time, so an object has at
 * most one write in flight and its state after a crash is either its last acknowledged state or
 * the in-flight write.
 */

import { isDeepStrictEqual } from "node:util";
import { assert } from "./assert.ts";
import { assertThreadsServed } from "./threads.ts";
import { type PlatformProcess, startPlatform } from "./platform_process.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const PREFIX = "crash-w";
const WRITERS = 16;
const KILLS = 6;
const REQUEST_TIMEOUT_MS = 15_000;

/** The server's last log lines, for failure messages. */
function lastLines(child: PlatformProcess): string {
  return child.lines.slice(-200).join("\n");
}

// --- content --------------------------------------------------------------------------------

function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

const DATA_KEYS = ["gen", "payload", "seq", "sum", "writer"];

/** The data of generation `gen` of object `seq` of writer `writer`; self-checking. */
function content(writer: number, seq: number, gen: number): Record<string, string> {
  const len = 40 + (fnv1a(`${writer}/${seq}/${gen}`).charCodeAt(0) * 37) % 1500;
  const unit = `w${writer}s${seq}g${gen}-é✓-`;
  const payload = unit.repeat(Math.ceil(len / unit.length)).slice(0, len);
  const [w, s, g] = [String(writer), String(seq), String(gen)];
  return { writer: w, seq: s, gen: g, payload, sum: fnv1a(`${w}|${s}|${g}|${payload}`) };
}

/** Why `data` is not a well-formed, self-consistent payload, or undefined. */
function shapeProblem(item: any): string | undefined {
  const data = item?.data;
  if (!data || typeof data !== "object") return "no data";
  const keys = Object.keys(data).sort();
  if (!isDeepStrictEqual(keys, DATA_KEYS)) return `data keys ${JSON.stringify(keys)}`;
  if (fnv1a(`${data.writer}|${data.seq}|${data.gen}|${data.payload}`) !== data.sum) {
    return "checksum mismatch";
  }
  if (item.metadata?.name !== `${PREFIX}${data.writer}-${data.seq}`) return "name/data mismatch";
  if (!/^\d+$/.test(item.metadata?.resourceVersion ?? "")) return "bad resourceVersion";
  return undefined;
}

// --- the model ------------------------------------------------------------------------------

type State =
  | { present: true; data: Record<string, string>; rv?: number }
  | { present: false };

interface Obj {
  name: string;
  writer: number;
  seq: number;
  gen: number;
  /** The last acknowledged state; absent until the create is acknowledged. */
  acked?: State;
  /** A write whose request was (maybe) sent, without an acknowledgement. */
  pending?: State;
}

interface Model {
  objects: Map<string, Obj>;
  /** Revision → name, over every acknowledged create and update. */
  ackedRevisions: Map<number, string>;
  maxAcked: number;
  violations: string[];
  stats: { acked: number; inflightLost: number; inflightApplied: number; errors: number };
}

function describe(s: State | undefined): string {
  if (!s) return "absent (never acknowledged)";
  if (!s.present) return "deleted";
  return `gen ${s.data.gen} rv ${s.rv ?? "?"}`;
}

// --- load -----------------------------------------------------------------------------------

interface Phase {
  url: string;
  client: Deno.HttpClient;
  token: string;
  /** Every write acknowledged in this phase must have a revision above this. */
  floor: number;
  killed: boolean;
  stopped: boolean;
  nextSeq: number[];
}

async function send(
  phase: Phase,
  method: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: any; text: string; cut?: boolean } | { error: string }> {
  try {
    const res = await fetch(phase.url + path, {
      method,
      client: phase.client,
      headers: {
        Authorization: `Bearer ${phase.token}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text().catch(() => undefined);
    if (text === undefined) return { status: res.status, body: undefined, text: "", cut: true };
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch { /* reported by the caller */ }
    return { status: res.status, body: parsed, text };
  } catch (err) {
    return { error: String((err as Error)?.message ?? err) };
  }
}

function acknowledge(model: Model, phase: Phase, obj: Obj, what: string, res: any): void {
  const sent = obj.pending as State & { present: true };
  const rv = Number(res.body?.metadata?.resourceVersion);
  if (res.cut) {
    // Status received, body cut short by the kill: acknowledged, revision unknown.
    obj.acked = { present: true, data: sent.data };
    obj.pending = undefined;
    model.stats.acked++;
    return;
  }
  if (!Number.isSafeInteger(rv) || !isDeepStrictEqual(res.body?.data, sent.data)) {
    model.violations.push(
      `${what}: the response does not echo the write: ${res.text.slice(0, 300)}`,
    );
  }
  if (rv <= phase.floor) {
    model.violations.push(
      `${what}: acknowledged at revision ${rv}, not above ${phase.floor} (acknowledged or visible before)`,
    );
  }
  const prev = obj.acked?.present ? obj.acked.rv : undefined;
  if (prev !== undefined && rv <= prev) {
    model.violations.push(`${what}: revision ${rv} is not above the previous one, ${prev}`);
  }
  const other = model.ackedRevisions.get(rv);
  if (other !== undefined) {
    model.violations.push(`${what}: revision ${rv} was already acknowledged for ${other}`);
  }
  model.ackedRevisions.set(rv, obj.name);
  model.maxAcked = Math.max(model.maxAcked, rv);
  obj.acked = { present: true, data: sent.data, rv };
  obj.pending = undefined;
  model.stats.acked++;
}

/** One writer: sequential requests until the server dies or the phase stops. */
async function writer(model: Model, phase: Phase, id: number): Promise<void> {
  const mine: Obj[] = [...model.objects.values()].filter((o) =>
    o.writer === id && o.acked?.present && !o.pending
  );
  while (!phase.stopped) {
    const r = Math.random();
    let obj: Obj;
    let method: string;
    let path: string;
    let body: unknown;
    if (mine.length > 0 && r < 0.2) {
      // update
      obj = mine[Math.floor(Math.random() * mine.length)];
      const acked = obj.acked as State & { present: true };
      obj.gen++;
      const data = content(id, obj.seq, obj.gen);
      obj.pending = { present: true, data };
      method = "PUT";
      path = `${CM}/${obj.name}`;
      body = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: obj.name,
          ...(acked.rv === undefined ? {} : { resourceVersion: String(acked.rv) }),
        },
        data,
      };
    } else if (mine.length > 0 && r < 0.28) {
      // delete
      const i = Math.floor(Math.random() * mine.length);
      obj = mine[i];
      mine.splice(i, 1);
      obj.pending = { present: false };
      method = "DELETE";
      path = `${CM}/${obj.name}`;
    } else {
      // create
      const seq = phase.nextSeq[id]++;
      obj = { name: `${PREFIX}${id}-${seq}`, writer: id, seq, gen: 0 };
      model.objects.set(obj.name, obj);
      const data = content(id, seq, 0);
      obj.pending = { present: true, data };
      method = "POST";
      path = CM;
      body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: obj.name }, data };
    }
    const what = `${method} ${obj.name} (gen ${obj.gen})`;
    const res = await send(phase, method, path, body);
    if ("error" in res) {
      // The request may or may not have been applied; the writer stops (the server is gone).
      if (!phase.killed) {
        model.violations.push(`${what}: request failed while the server was up: ${res.error}`);
      }
      return;
    }
    const expected = method === "POST" ? 201 : 200;
    if (res.status !== expected) {
      model.stats.errors++;
      model.violations.push(`${what}: HTTP ${res.status}: ${res.text.slice(0, 300)}`);
      continue; // left pending: it may or may not have been applied
    }
    if (method === "DELETE") {
      obj.acked = { present: false };
      obj.pending = undefined;
      model.stats.acked++;
      const rv = Number(res.body?.metadata?.resourceVersion);
      if (Number.isSafeInteger(rv)) model.maxAcked = Math.max(model.maxAcked, rv);
    } else {
      acknowledge(model, phase, obj, what, res);
      if (method === "POST") mine.push(obj);
    }
  }
}

// --- verification ---------------------------------------------------------------------------

/** Checks the restarted server against the model, then makes what it shows the new baseline.
 * Returns the revision floor for the next phase. */
async function verify(model: Model, phase: Phase, label: string): Promise<number> {
  const v = model.violations;
  const before = v.length;
  const res = await send(phase, "GET", CM, undefined);
  if ("error" in res || res.status !== 200 || !Array.isArray(res.body?.items)) {
    v.push(`${label}: list failed: ${JSON.stringify(res).slice(0, 500)}`);
    return model.maxAcked;
  }
  const listRv = Number(res.body.metadata?.resourceVersion);
  if (!Number.isSafeInteger(listRv) || listRv < model.maxAcked) {
    v.push(
      `${label}: list resourceVersion ${res.body.metadata?.resourceVersion} is below the highest acknowledged revision ${model.maxAcked}`,
    );
  }
  const visible = new Map<string, any>();
  const revisions = new Map<number, string>();
  for (const item of res.body.items) {
    const name = item?.metadata?.name;
    if (typeof name !== "string" || !name.startsWith(PREFIX)) continue;
    const problem = shapeProblem(item);
    if (problem) {
      v.push(`${label}: ${name} is malformed (${problem}): ${JSON.stringify(item).slice(0, 300)}`);
      continue;
    }
    const rv = Number(item.metadata.resourceVersion);
    if (rv > listRv) v.push(`${label}: ${name} has revision ${rv} above the list's ${listRv}`);
    const dup = revisions.get(rv);
    if (dup) v.push(`${label}: ${name} and ${dup} both have revision ${rv}`);
    revisions.set(rv, name);
    const ackedFor = model.ackedRevisions.get(rv);
    if (ackedFor !== undefined && ackedFor !== name) {
      v.push(`${label}: ${name} has revision ${rv}, which was acknowledged for ${ackedFor}`);
    }
    if (!model.objects.has(name)) v.push(`${label}: ${name} was never written`);
    visible.set(name, item);
  }

  for (const obj of model.objects.values()) {
    const item = visible.get(obj.name);
    const actualRv: number | undefined = item ? Number(item.metadata.resourceVersion) : undefined;
    const actual: State = item
      ? { present: true, data: item.data, rv: actualRv }
      : { present: false };
    const matches = (s: State | undefined, ackedRv?: number): boolean => {
      if (!s || !s.present) return !item;
      if (!item || !isDeepStrictEqual(item.data, s.data)) return false;
      if (s.rv !== undefined) return s.rv === actualRv;
      return ackedRv === undefined || actualRv! > ackedRv;
    };
    const ackedRv = obj.acked?.present ? obj.acked.rv : undefined;
    if (matches(obj.acked)) {
      if (obj.pending) model.stats.inflightLost++;
    } else if (obj.pending && matches(obj.pending, ackedRv)) {
      model.stats.inflightApplied++;
    } else {
      v.push(
        `${label}: ${obj.name}: expected ${describe(obj.acked)}${
          obj.pending ? ` or the in-flight ${describe(obj.pending)}` : ""
        }, found ${item ? describe(actual) : "nothing"}`,
      );
    }
    obj.acked = actual.present || obj.acked ? actual : undefined;
    obj.pending = undefined;
    if (actual.present) obj.gen = Math.max(obj.gen, Number(actual.data.gen));
  }

  // A sample of single GETs agrees with the list.
  const names = [...model.objects.keys()];
  for (let i = 0; i < 40 && names.length; i++) {
    const name = names[Math.floor(Math.random() * names.length)];
    const got = await send(phase, "GET", `${CM}/${name}`, undefined);
    const item = visible.get(name);
    if ("error" in got) {
      v.push(`${label}: GET ${name} failed: ${got.error}`);
    } else if (item && (got.status !== 200 || !isDeepStrictEqual(got.body?.data, item.data))) {
      v.push(`${label}: GET ${name} → ${got.status}, disagrees with the list`);
    } else if (!item && got.status !== 404) {
      v.push(`${label}: GET ${name} → ${got.status}, but it is not in the list`);
    }
  }
  if (v.length > before) {
    throw new Error(
      `${label}: ${v.length - before} violation(s):\n${v.slice(before, before + 30).join("\n")}`,
    );
  }
  return Math.max(model.maxAcked, Number.isSafeInteger(listRv) ? listRv : 0);
}

// --- the test -------------------------------------------------------------------------------

Deno.test({
  name: "crash safety: acknowledged writes survive SIGKILL",
  sanitizeOps: true,
  sanitizeResources: true,
}, () => crashSafety([]));

// With a worker thread, writes arrive on both threads (HTTP/1.1: the writers' requests go over
// several connections, which the kernel spreads) and reach the store through the main thread.
Deno.test({
  name: "crash safety with --workers=2: acknowledged writes survive SIGKILL",
  sanitizeOps: true,
  sanitizeResources: true,
}, () => crashSafety(["--workers=2"], { http2: false }));

Deno.test({
  name: "crash safety with --workers=4: acknowledged writes survive SIGKILL",
  sanitizeOps: true,
  sanitizeResources: true,
}, () => crashSafety(["--workers=4"], { http2: false }));

async function crashSafety(
  flags: string[],
  clientOptions: Deno.CreateHttpClientOptions = {},
): Promise<void> {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-crash-" });
  const workers = Number(flags.find((f) => f.startsWith("--workers="))?.slice(10) ?? 1);
  let child: PlatformProcess | undefined;
  const model: Model = {
    objects: new Map(),
    ackedRevisions: new Map(),
    maxAcked: 0,
    violations: [],
    stats: { acked: 0, inflightLost: 0, inflightApplied: 0, errors: 0 },
  };
  const nextSeq = Array.from({ length: WRITERS }, () => 0);
  const summary: string[] = [];
  let floor = 0;
  const withClient = async <T>(fn: (phase: Phase) => Promise<T>): Promise<T> => {
    const caPem = await Deno.readTextFile(`${dataDir}/pki/ca.crt`);
    const token = (await Deno.readTextFile(`${dataDir}/pki/admin.token`)).trim();
    const client = Deno.createHttpClient({ caCerts: [caPem], ...clientOptions });
    const phase: Phase = {
      url: child!.url,
      client,
      token,
      floor,
      killed: false,
      stopped: false,
      nextSeq,
    };
    try {
      return await fn(phase);
    } finally {
      client.close();
    }
  };
  try {
    child = await startPlatform(dataDir, flags);
    for (let round = 1; round <= KILLS + 1; round++) {
      const last = round > KILLS;
      await withClient(async (phase) => {
        if (round > 1) floor = await verify(model, phase, `after restart ${round - 1}`);
        phase.floor = floor;
        const ackedBefore = model.stats.acked;
        const writers = Array.from({ length: WRITERS }, (_, id) => writer(model, phase, id));
        const loadMs = 200 + Math.floor(Math.random() * 600);
        await new Promise((r) => setTimeout(r, loadMs));
        if (last) {
          // A clean stop at the end: everything acknowledged must survive it too.
          phase.stopped = true;
          await Promise.all(writers);
          phase.killed = true;
          const status = await child!.stop("SIGTERM");
          assert(status.code === 0, `SIGTERM exit code ${status.code}:\n${lastLines(child!)}`);
        } else {
          phase.killed = true;
          await child!.stop("SIGKILL");
          phase.stopped = true;
          await Promise.all(writers);
        }
        child = undefined;
        const inflight = [...model.objects.values()].filter((o) => o.pending).length;
        summary.push(
          `round ${round}: ${last ? "SIGTERM" : "SIGKILL"} after ${loadMs} ms, ${
            model.stats.acked - ackedBefore
          } writes acknowledged, ${inflight} in flight, floor ${phase.floor}`,
        );
        assert(
          model.violations.length === 0,
          `during round ${round}:\n${model.violations.slice(0, 30).join("\n")}`,
        );
      });
      child = await startPlatform(dataDir, flags);
    }
    await withClient(async (phase) => {
      floor = await verify(model, phase, "after the clean stop");
      phase.floor = floor;
      // New writes after all that still get fresh revisions.
      phase.stopped = false;
      const writers = Array.from({ length: 4 }, (_, id) => writer(model, phase, id));
      await new Promise((r) => setTimeout(r, 100));
      phase.stopped = true;
      await Promise.all(writers);
      // The last server spreads new connections over its threads (with workers) as the
      // writers' were spread.
      const caCertPem = await Deno.readTextFile(`${dataDir}/pki/ca.crt`);
      await assertThreadsServed({ url: phase.url, caCertPem, adminToken: phase.token }, workers);
    });
    const live = [...model.objects.values()].filter((o) => o.acked?.present).length;
    summary.push(
      `objects written: ${model.objects.size}, live: ${live}, writes acknowledged: ${model.stats.acked}, ` +
        `in-flight writes applied: ${model.stats.inflightApplied}, lost: ${model.stats.inflightLost}, ` +
        `highest acknowledged revision: ${model.maxAcked}`,
    );
    console.log(summary.join("\n"));
    assert(model.stats.acked > 0, "no write was acknowledged");
    assert(
      model.violations.length === 0,
      `${model.violations.length} violation(s):\n${model.violations.slice(0, 30).join("\n")}`,
    );
  } catch (err) {
    if (child) {
      (err as Error).message += `\n--- server log (last lines) ---\n${lastLines(child)}`;
    }
    throw err;
  } finally {
    if (child) await child.stop("SIGKILL");
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}
