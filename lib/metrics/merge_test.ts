import assert from "node:assert/strict";
import { exposeFamilies, familySamples, mergeFamilies, ServerMetrics } from "./mod.ts";

function server(): ServerMetrics {
  return new ServerMetrics({ version: "1.32" });
}

Deno.test("merge: one thread's samples give the text its registry gives", () => {
  const m = server();
  m.watchEvents.child("", "v1", "ConfigMap").inc(3);
  m.registeredWatchers.child("", "v1", "ConfigMap").set(2);
  m.storageDuration.child("get", "configmaps").observe(0.003);
  m.storageDuration.child("create", "configmaps").observe(2);
  m.sources.inflight = () => ({ readOnly: 1, mutating: 0 });
  const threads = [familySamples(m.registry)];
  // Process figures are read at each scrape: compare everything but them.
  const steady = (text: string) =>
    text.split("\n").filter((l) => !/^(# \w+ )?(process_|deno_heap|deno_external)/.test(l))
      .join("\n");
  assert.equal(steady(exposeFamilies(mergeFamilies(threads))), steady(m.registry.expose()));
});

Deno.test("merge: counters, histograms and total gauges add; process and build figures once", () => {
  const a = server();
  const b = server();
  a.watchEvents.child("", "v1", "ConfigMap").inc(3);
  b.watchEvents.child("", "v1", "ConfigMap").inc(4);
  b.watchEvents.child("apps", "v1", "Deployment").inc(1);
  a.registeredWatchers.child("", "v1", "ConfigMap").set(2);
  b.registeredWatchers.child("", "v1", "ConfigMap").set(5);
  a.storageDuration.child("get", "configmaps").observe(0.003);
  b.storageDuration.child("get", "configmaps").observe(2);
  a.sources.inflight = () => ({ readOnly: 1, mutating: 2 });
  b.sources.inflight = () => ({ readOnly: 10, mutating: 20 });
  a.sources.storageObjects = () => [["configmaps", 7]];
  b.sources.storageObjects = () => [["configmaps", 7]];
  const text = exposeFamilies(
    mergeFamilies([familySamples(a.registry), familySamples(b.registry)]),
  );
  const value = (sample: string) => {
    const line = text.split("\n").find((l) => l.startsWith(sample + " "));
    assert.ok(line, `${sample} missing from\n${text}`);
    return Number(line.split(" ").at(-1));
  };
  assert.equal(value('apiserver_watch_events_total{group="",version="v1",kind="ConfigMap"}'), 7);
  assert.equal(
    value('apiserver_watch_events_total{group="apps",version="v1",kind="Deployment"}'),
    1,
  );
  assert.equal(value('apiserver_registered_watchers{group="",version="v1",kind="ConfigMap"}'), 7);
  assert.equal(value('apiserver_current_inflight_requests{request_kind="mutating"}'), 22);
  assert.equal(value('apiserver_current_inflight_requests{request_kind="readOnly"}'), 11);
  assert.equal(value('apiserver_storage_objects{resource="configmaps"}'), 7);
  assert.equal(value('etcd_request_duration_seconds_count{operation="get",type="configmaps"}'), 2);
  assert.equal(
    value('etcd_request_duration_seconds_sum{operation="get",type="configmaps"}'),
    2.003,
  );
  assert.equal(
    value('etcd_request_duration_seconds_bucket{operation="get",type="configmaps",le="0.005"}'),
    1,
  );
  assert.equal(
    value('etcd_request_duration_seconds_bucket{operation="get",type="configmaps",le="+Inf"}'),
    2,
  );
  assert.equal(value("process_start_time_seconds"), Math.floor(performance.timeOrigin) / 1000);
  assert.equal(text.split("\n").filter((l) => l.startsWith("deno_info{")).length, 1);
  assert.equal(value("apiserver_audit_event_total"), 0);
});
