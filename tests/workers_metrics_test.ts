/**
 * `/metrics` with `--workers`: a scrape on any thread answers for every thread. Requests spread
 * over the threads (each on a connection of its own); then every scrape, each on a new
 * connection (the kernel picks the thread), counts all of them in `apiserver_request_total`,
 * and the process's figures appear once.
 */

import { assert, assertEquals } from "./assert.ts";
import { testServer } from "./harness.ts";

const server = (ts: Awaited<ReturnType<typeof testServer>>) => ts.server;

/** One GET on a connection of its own; the body as text. */
async function getOnNewConnection(
  s: { url: string; caCertPem: string; adminToken: string },
  path: string,
): Promise<{ status: number; text: string }> {
  const client = Deno.createHttpClient({ caCerts: [s.caCertPem] });
  try {
    const res = await fetch(s.url + path, {
      client,
      headers: { Authorization: `Bearer ${s.adminToken}` },
    });
    return { status: res.status, text: await res.text() };
  } finally {
    client.close();
  }
}

/** The sum of the samples of `metric` whose labels include every one of `labels`. */
function sum(text: string, metric: string, labels: string[]): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(metric + "{")) continue;
    const set = line.slice(metric.length, line.lastIndexOf(" "));
    if (labels.every((l) => set.includes(l))) total += Number(line.split(" ").at(-1));
  }
  return total;
}

for (const workers of [2, 4]) {
  Deno.test(`--workers=${workers}: every scrape counts the requests of every thread`, async () => {
    await using ts = await testServer({ workers });
    const s = server(ts);
    const lists = 40;
    for (let i = 0; i < lists; i++) {
      const res = await getOnNewConnection(s, "/api/v1/namespaces/kube-public/configmaps");
      assertEquals(res.status, 200);
    }
    const listed = (text: string) =>
      sum(text, "apiserver_request_total", [
        'verb="LIST"',
        'resource="configmaps"',
        'scope="namespace"',
        'code="200"',
      ]);
    // A request is counted once its answer is sent: the first scrape may come a moment
    // before the last count, so wait (bounded) until one shows all of them.
    let first = 0;
    for (let tries = 0; first < lists; tries++) {
      assert(tries < 100, `the scrapes never counted all ${lists} lists: ${first}`);
      if (tries > 0) await new Promise((r) => setTimeout(r, 50));
      first = listed((await getOnNewConnection(s, "/metrics")).text);
    }
    assertEquals(first, lists);
    // Then every scrape, from whichever thread, says the same.
    for (let i = 0; i < 16; i++) {
      const scrape = await getOnNewConnection(s, "/metrics");
      assertEquals(scrape.status, 200);
      assertEquals(listed(scrape.text), lists, `scrape ${i}`);
      const lines = scrape.text.split("\n");
      assertEquals(lines.filter((l) => l.startsWith("process_start_time_seconds ")).length, 1);
      assertEquals(lines.filter((l) => l === "# TYPE apiserver_request_total counter").length, 1);
    }
  });
}
