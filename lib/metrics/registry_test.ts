import assert from "node:assert/strict";
import { formatValue, MetricsRegistry, showHiddenMetricsProblem } from "./mod.ts";

Deno.test("text format: HELP with the stability level, TYPE, sorted families and samples", () => {
  const r = new MetricsRegistry({ version: "1.32" });
  const c = r.counter({
    name: "b_total",
    help: "Counts b.\nTwo lines \\ here.",
    stability: "STABLE",
    labels: ["verb", "code"],
  });
  c.child("POST", "201").inc();
  c.child("GET", "200").inc(2);
  c.child("GET", "200").inc();
  r.gauge({ name: "a_value", help: "A gauge.", labels: ["path"] }).child('say "hi"\\\n').set(1.5);
  r.counter({ name: "c_unlabelled", help: "Zero from the start.", stability: "BETA" });
  r.counter({ name: "d_empty", help: "No samples: not listed.", labels: ["x"] });
  assert.equal(
    r.expose(),
    [
      "# HELP a_value [ALPHA] A gauge.",
      "# TYPE a_value gauge",
      'a_value{path="say \\"hi\\"\\\\\\n"} 1.5',
      "# HELP b_total [STABLE] Counts b.\\nTwo lines \\\\ here.",
      "# TYPE b_total counter",
      'b_total{verb="GET",code="200"} 3',
      'b_total{verb="POST",code="201"} 1',
      "# HELP c_unlabelled [BETA] Zero from the start.",
      "# TYPE c_unlabelled counter",
      "c_unlabelled 0",
      "",
    ].join("\n"),
  );
});

Deno.test("histograms: cumulative buckets with Go's number format, +Inf, sum and count", () => {
  const r = new MetricsRegistry({ version: "1.32" });
  const h = r.histogram({
    name: "size_bytes",
    help: "Sizes.",
    labels: ["verb"],
    buckets: [1000, 100000, 1000000],
  });
  const child = h.child("GET");
  for (const v of [10, 1000, 5000, 2e6]) child.observe(v);
  assert.equal(
    r.expose(),
    [
      "# HELP size_bytes [ALPHA] Sizes.",
      "# TYPE size_bytes histogram",
      'size_bytes_bucket{verb="GET",le="1000"} 2',
      'size_bytes_bucket{verb="GET",le="100000"} 3',
      'size_bytes_bucket{verb="GET",le="1e+06"} 3',
      'size_bytes_bucket{verb="GET",le="+Inf"} 4',
      'size_bytes_sum{verb="GET"} 2.00601e+06',
      'size_bytes_count{verb="GET"} 4',
      "",
    ].join("\n"),
  );
  assert.throws(
    () => r.histogram({ name: "bad", help: "", buckets: [2, 1] }),
    /buckets must increase/,
  );
});

Deno.test("numbers as Go's %g writes them", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [0.005, "0.005"],
    [1.25, "1.25"],
    [100000, "100000"],
    [1e6, "1e+06"],
    [1234567, "1.234567e+06"],
    [1e9, "1e+09"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [-3, "-3"],
    [Infinity, "+Inf"],
    [NaN, "NaN"],
  ];
  for (const [v, text] of cases) assert.equal(formatValue(v), text, String(v));
});

Deno.test("deprecated metrics: prefixed and logged; 3 minors back hidden unless shown", () => {
  const declare = (r: MetricsRegistry) => {
    r.counter({ name: "m_recent", help: "Recent.", deprecatedVersion: "1.31.0" });
    r.counter({ name: "m_old", help: "Old.", stability: "STABLE", deprecatedVersion: "1.29.0" });
    r.counter({ name: "m_future", help: "Future.", deprecatedVersion: "1.33.0" });
    return r;
  };
  const warnings: string[] = [];
  const logger = { warn: (m: string) => void warnings.push(m) };
  const r = declare(new MetricsRegistry({ version: "1.32", logger }));
  const text = r.expose();
  assert.match(text, /^# HELP m_recent \[ALPHA\] \(Deprecated since 1\.31\.0\) Recent\.$/m);
  assert.match(text, /^# HELP m_future \[ALPHA\] Future\.$/m);
  assert.doesNotMatch(text, /m_old/);
  assert.deepEqual(warnings, [
    "metrics: m_recent is deprecated since 1.31.0",
    "metrics: m_old is deprecated since 1.29.0 and hidden " +
    "(--show-hidden-metrics-for-version shows it)",
  ]);
  assert.equal(r.descriptors().find((d) => d.name === "m_old")?.hidden, true);

  const shown = declare(
    new MetricsRegistry({ version: "1.32", showHiddenMetricsForVersion: "1.31" }),
  );
  assert.match(shown.expose(), /^# HELP m_old \[STABLE\] \(Deprecated since 1\.29\.0\) Old\.$/m);
  assert.match(shown.expose(), /^m_old 0$/m);
});

Deno.test("--show-hidden-metrics-for-version takes only the previous minor version", () => {
  assert.equal(showHiddenMetricsProblem("1.32", "1.31"), undefined);
  assert.equal(showHiddenMetricsProblem("1.32", "1.31.0"), undefined);
  assert.equal(
    showHiddenMetricsProblem("1.32", "1.30"),
    'must be omitted or the previous minor version "1.31" (only it may show hidden ' +
      'metrics), got "1.30"',
  );
  assert.ok(showHiddenMetricsProblem("1.32", "latest"));
  assert.throws(
    () => new MetricsRegistry({ version: "1.32", showHiddenMetricsForVersion: "1.32" }),
    /--show-hidden-metrics-for-version: must be omitted/,
  );
});

Deno.test("a registry that is off records and exposes nothing", () => {
  const r = new MetricsRegistry({ version: "1.32", enabled: false });
  const c = r.counter({ name: "x_total", help: "X.", labels: ["a"] });
  c.child("1").inc();
  r.collected("gauge", { name: "y", help: "Y." }, (emit) => emit(1));
  assert.equal(r.expose(), "");
  assert.throws(() => r.counter({ name: "x_total", help: "again" }), /already registered/);
});
