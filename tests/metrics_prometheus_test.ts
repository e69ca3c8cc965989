/**
 * A real Prometheus scrapes the server: its generated configuration (the README's) reaches
 * `/metrics` over HTTPS with the server's CA and the bearer token of a user in the group
 * `system:monitoring`, parses every sample, and answers queries with the requests the test
 * made.
 */

import { assertEquals } from "./assert.ts";
import { testServer, tokenFile } from "./harness.ts";
import { prometheusInstalled, startPrometheus } from "./prometheus.ts";

Deno.test({
  name: "Prometheus scrapes /metrics as system:monitoring and counts the requests made",
  ignore: !prometheusInstalled,
  async fn() {
    await using tokens = await tokenFile({
      "monitor-token": { name: "prometheus", groups: ["system:monitoring"] },
    });
    await using ts = await testServer({ tokenAuthFile: tokens.path });
    await using prometheus = await startPrometheus({
      target: `127.0.0.1:${ts.server.port}`,
      caPem: ts.server.caCertPem,
      token: "monitor-token",
    });
    // A scrape that worked: the target is up, with no error (a sample Prometheus cannot parse
    // fails the whole scrape).
    const target = await prometheus.until("a successful scrape", async () => {
      const [t] = await prometheus.targets();
      return t?.health === "up" ? t : undefined;
    });
    assertEquals(target.lastError, "");
    assertEquals(target.scrapeUrl, `https://127.0.0.1:${ts.server.port}/metrics`);

    for (let i = 0; i < 3; i++) {
      const res = await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
        body: { metadata: { name: `cm-${i}` } },
      });
      assertEquals(res.status, 201);
    }
    assertEquals((await ts.json("GET", "/api/v1/namespaces/default/configmaps/cm-0")).status, 200);

    const created = 'apiserver_request_total{resource="configmaps",verb="POST",code="201"}';
    const value = await prometheus.until("the creates in a scrape", async () => {
      const [s] = await prometheus.query(created);
      return s && Number(s.value[1]) === 3 ? s : undefined;
    });
    assertEquals(value.metric.scope, "resource");
    assertEquals(value.metric.component, "apiserver");
    assertEquals(value.metric.job, "platform");

    // A histogram Prometheus can compute with, and a gauge of stored objects.
    const [p99] = await prometheus.query(
      'histogram_quantile(0.99, sum by (le) (apiserver_request_duration_seconds_bucket{verb="POST",resource="configmaps"}))',
    );
    const seconds = Number(p99.value[1]);
    assertEquals(seconds > 0 && seconds <= 60, true, `p99 ${seconds}`);
    const [objects] = await prometheus.query('apiserver_storage_objects{resource="configmaps"}');
    assertEquals(Number(objects.value[1]) >= 3, true, `configmaps ${objects.value[1]}`);
    const [monitoring] = await prometheus.query(
      'apiserver_request_total{subresource="/metrics",code="200"}',
    );
    assertEquals(Number(monitoring.value[1]) >= 1, true);
  },
});
