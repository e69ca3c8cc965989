// deno-lint-ignore-file no-explicit-any
/**
 * Core v1 Services over HTTPS: kube's defaults and validation, cluster IP and node port
 * allocation (unique under concurrent creates, released on delete, kept across restarts), and
 * the `kubernetes` Service the server keeps in `default`.
 */

import { assert, assertEquals } from "./assert.ts";
import { createAsAdmin, type TestServer, testServer } from "./harness.ts";

const SVCS = "/api/v1/namespaces/default/services";

function svc(name: string, spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name },
    spec: { ports: [{ port: 80 }], ...spec },
  };
}

/** The causes of a 422 as `field: message` lines. */
function causes(body: any): string[] {
  return (body?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`);
}

async function expectInvalid(ts: TestServer, body: any, expected: string[]): Promise<void> {
  const res = await ts.json("POST", SVCS, { body });
  assertEquals(res.status, 422, JSON.stringify(res.body));
  assertEquals(res.body.reason, "Invalid");
  for (const line of expected) {
    assert(
      causes(res.body).includes(line),
      `missing cause ${JSON.stringify(line)} in ${JSON.stringify(causes(res.body))}`,
    );
  }
}

Deno.test("services: create fills kube's defaults and a cluster IP from the range", async () => {
  await using ts = await testServer();
  const created = await createAsAdmin(
    ts,
    SVCS,
    svc("web", { selector: { app: "web" }, ports: [{ port: 80, targetPort: 0 }] }),
  );
  const spec = created.spec;
  assertEquals(spec.type, "ClusterIP");
  assertEquals(spec.sessionAffinity, "None");
  assertEquals(spec.internalTrafficPolicy, "Cluster");
  assertEquals(spec.ipFamilyPolicy, "SingleStack");
  assertEquals(spec.ipFamilies, ["IPv4"]);
  assertEquals(spec.ports, [{ port: 80, protocol: "TCP", targetPort: 80 }]);
  assert(/^10\.0\.0\.\d+$/.test(spec.clusterIP), spec.clusterIP);
  assert(spec.clusterIP !== "10.0.0.1", "the first address is the kubernetes Service's");
  assertEquals(spec.clusterIPs, [spec.clusterIP]);
  assertEquals(spec.externalTrafficPolicy, undefined);
  assertEquals(created.status, { loadBalancer: {} });
  // What GET returns is what was stored.
  const got = await ts.json("GET", `${SVCS}/web`);
  assertEquals(got.body.spec, spec);
  // A NodePort Service gets a node port and externalTrafficPolicy Cluster.
  const np = await createAsAdmin(ts, SVCS, svc("np", { type: "NodePort" }));
  const nodePort = np.spec.ports[0].nodePort;
  assert(nodePort >= 30000 && nodePort <= 32767, String(nodePort));
  assertEquals(np.spec.externalTrafficPolicy, "Cluster");
  // Headless: no cluster IP allocated.
  const headless = await createAsAdmin(
    ts,
    SVCS,
    svc("hl", { clusterIP: "None", selector: { app: "x" } }),
  );
  assertEquals(headless.spec.clusterIPs, ["None"]);
  // ExternalName: no cluster IP, no families.
  const ext = await createAsAdmin(ts, SVCS, {
    metadata: { name: "ext" },
    spec: { type: "ExternalName", externalName: "example.com" },
  });
  assertEquals(ext.spec.clusterIP, undefined);
  assertEquals(ext.spec.ipFamilies, undefined);
  // Field selectors on spec.type and spec.clusterIP, as kube has them.
  const byType = await ts.json("GET", `${SVCS}?fieldSelector=spec.type%3DNodePort`);
  assertEquals(byType.body.items.map((s: any) => s.metadata.name), ["np"]);
  const notHeadless = await ts.json("GET", `${SVCS}?fieldSelector=spec.clusterIP!%3DNone`);
  assert(!notHeadless.body.items.some((s: any) => s.metadata.name === "hl"));
});

Deno.test("services: 20 concurrent creates get 20 different cluster IPs", async () => {
  await using ts = await testServer();
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => ts.json("POST", SVCS, { body: svc(`s${i}`) })),
  );
  for (const r of results) assertEquals(r.status, 201, JSON.stringify(r.body));
  const ips = results.map((r) => r.body.spec.clusterIP);
  assertEquals(new Set(ips).size, 20, ips.join(" "));
  // Node ports too.
  const nps = await Promise.all(
    Array.from(
      { length: 10 },
      (_, i) => ts.json("POST", SVCS, { body: svc(`n${i}`, { type: "NodePort" }) }),
    ),
  );
  const ports = nps.map((r) => r.body.spec.ports[0].nodePort);
  assertEquals(new Set(ports).size, 10, ports.join(" "));
});

Deno.test("services: a taken or out-of-range cluster IP is refused; delete releases it", async () => {
  await using ts = await testServer();
  await createAsAdmin(ts, SVCS, svc("a", { clusterIP: "10.0.0.50" }));
  await expectInvalid(ts, svc("b", { clusterIP: "10.0.0.50" }), [
    'spec.clusterIPs: Invalid value: ["10.0.0.50"]: failed to allocate IP 10.0.0.50: provided IP is already allocated',
  ]);
  await expectInvalid(ts, svc("b", { clusterIP: "10.0.0.1" }), [
    'spec.clusterIPs: Invalid value: ["10.0.0.1"]: failed to allocate IP 10.0.0.1: provided IP is already allocated',
  ]);
  await expectInvalid(ts, svc("b", { clusterIP: "192.168.1.1" }), [
    'spec.clusterIPs: Invalid value: ["192.168.1.1"]: failed to allocate IP 192.168.1.1: the provided IP (192.168.1.1) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
  ]);
  // The failed create of a name that exists gives its IP back.
  const dup = await ts.json("POST", SVCS, { body: svc("a", { clusterIP: "10.0.0.51" }) });
  assertEquals(dup.status, 409);
  await createAsAdmin(ts, SVCS, svc("c", { clusterIP: "10.0.0.51" }));
  // Deleting releases the IP: another Service can have it.
  // As kube's, a Service's DELETE answers with the deleted Service.
  const deleted = await ts.json("DELETE", `${SVCS}/a`);
  assertEquals(deleted.status, 200);
  assertEquals(deleted.body.kind, "Service");
  assertEquals(deleted.body.spec.clusterIP, "10.0.0.50");
  const again = await createAsAdmin(ts, SVCS, svc("d", { clusterIP: "10.0.0.50" }));
  assertEquals(again.spec.clusterIP, "10.0.0.50");
  // Node ports likewise.
  await createAsAdmin(
    ts,
    SVCS,
    svc("np1", { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] }),
  );
  await expectInvalid(
    ts,
    svc("np2", { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] }),
    ["spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"],
  );
  await expectInvalid(
    ts,
    svc("np2", { type: "NodePort", ports: [{ port: 80, nodePort: 8080 }] }),
    [
      "spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767",
    ],
  );
  // Switching to ClusterIP gives the node port back.
  const np1 = (await ts.json("GET", `${SVCS}/np1`)).body;
  np1.spec.type = "ClusterIP";
  const switched = await ts.json("PUT", `${SVCS}/np1`, { body: np1 });
  assertEquals(switched.status, 200, JSON.stringify(switched.body));
  assertEquals(switched.body.spec.ports[0].nodePort, undefined);
  await createAsAdmin(
    ts,
    SVCS,
    svc("np2", { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] }),
  );
});

Deno.test("services: a full range is a 500 as in kube; a small range from the flag", async () => {
  // A /29 holds 6 addresses; the first is the kubernetes Service's.
  await using ts = await testServer({ serviceClusterIPRange: "10.9.0.0/29" });
  const k = await ts.json("GET", "/api/v1/namespaces/default/services/kubernetes");
  assertEquals(k.body.spec.clusterIP, "10.9.0.1");
  for (let i = 0; i < 5; i++) await createAsAdmin(ts, SVCS, svc(`f${i}`));
  const full = await ts.json("POST", SVCS, { body: svc("f5") });
  assertEquals(full.status, 500);
  assertEquals(
    full.body.message,
    "Internal error occurred: failed to allocate a serviceIP: range is full",
  );
});

Deno.test("services: cluster IPs are immutable; an update without them keeps them", async () => {
  await using ts = await testServer();
  const created = await createAsAdmin(ts, SVCS, svc("imm"));
  const ip = created.spec.clusterIP;
  const changed = structuredClone(created);
  // Another address than the one allocated (at random: it may be .99).
  const other = ip === "10.0.0.99" ? "10.0.0.98" : "10.0.0.99";
  changed.spec.clusterIP = other;
  changed.spec.clusterIPs = [other];
  const res = await ts.json("PUT", `${SVCS}/imm`, { body: changed });
  assertEquals(res.status, 422);
  assert(
    causes(res.body).includes(
      `spec.clusterIPs[0]: Invalid value: ["${other}"]: may not change once set`,
    ),
    JSON.stringify(causes(res.body)),
  );
  // The manifest applied again (no clusterIP in it) keeps the allocated one.
  const put = await ts.json("PUT", `${SVCS}/imm`, {
    body: { ...svc("imm", { ports: [{ port: 81 }] }), metadata: { name: "imm" } },
  });
  assertEquals(put.status, 200, JSON.stringify(put.body));
  assertEquals(put.body.spec.clusterIP, ip);
  assertEquals(put.body.spec.ports[0].port, 81);
  // A strategic merge patch merges ports by port number.
  const patched = await ts.json("PATCH", `${SVCS}/imm`, {
    headers: { "Content-Type": "application/strategic-merge-patch+json" },
    body: { spec: { ports: [{ port: 81, name: "http" }, { port: 443, name: "https" }] } },
  });
  assertEquals(patched.status, 200, JSON.stringify(patched.body));
  assertEquals(patched.body.spec.ports.map((p: any) => `${p.name}:${p.port}`), [
    "http:81",
    "https:443",
  ]);
  // Status is written through /status only.
  const condition = {
    type: "Ready",
    status: "True",
    reason: "Seen",
    message: "",
    lastTransitionTime: "2026-01-01T00:00:00Z",
  };
  const st = await ts.json("PUT", `${SVCS}/imm/status`, {
    body: { ...patched.body, status: { loadBalancer: {}, conditions: [condition] } },
  });
  assertEquals(st.status, 200, JSON.stringify(st.body));
  assertEquals(st.body.status.conditions[0].reason, "Seen");
});

Deno.test("services: validation errors are 422 with kube's field paths and messages", async () => {
  await using ts = await testServer();
  await expectInvalid(ts, { metadata: { name: "noports" }, spec: {} }, [
    "spec.ports: Required value",
  ]);
  await expectInvalid(ts, svc("1bad"), [
    "metadata.name: Invalid value: \"1bad\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  ]);
  await expectInvalid(ts, svc("twoports", { ports: [{ port: 80 }, { port: 81 }] }), [
    "spec.ports[0].name: Required value",
    "spec.ports[1].name: Required value",
  ]);
  await expectInvalid(
    ts,
    svc("dupname", { ports: [{ name: "a", port: 80 }, { name: "a", port: 81 }] }),
    ['spec.ports[1].name: Duplicate value: "a"'],
  );
  await expectInvalid(ts, svc("badport", { ports: [{ port: 70000, protocol: "ICMP" }] }), [
    "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
    'spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
  ]);
  await expectInvalid(ts, svc("badtarget", { ports: [{ port: 80, targetPort: "Not_Valid" }] }), [
    'spec.ports[0].targetPort: Invalid value: "Not_Valid": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
  ]);
  await expectInvalid(ts, svc("badtype", { type: "Magic" }), [
    'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
  ]);
  await expectInvalid(ts, svc("cipnp", { ports: [{ port: 80, nodePort: 30001 }] }), [
    "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
  ]);
  await expectInvalid(ts, svc("badip", { clusterIP: "10.0.0.300" }), [
    'spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
  ]);
  await expectInvalid(ts, svc("npnone", { type: "NodePort", clusterIP: "None" }), [
    "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services",
  ]);
  await expectInvalid(ts, svc("aff", { sessionAffinity: "Sticky" }), [
    'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
  ]);
  await expectInvalid(ts, svc("etp", { externalTrafficPolicy: "Local" }), [
    'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services',
  ]);
  await expectInvalid(ts, { metadata: { name: "en" }, spec: { type: "ExternalName" } }, [
    "spec.externalName: Required value",
  ]);
  await expectInvalid(ts, svc("sel", { selector: { "bad key!": "x" } }), [
    "spec.selector: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  ]);
  await expectInvalid(ts, svc("v6", { ipFamilies: ["IPv6"] }), [
    'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
  ]);
  await expectInvalid(ts, svc("dual", { ipFamilyPolicy: "RequireDualStack" }), [
    'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
  ]);
  // Nothing failed took an IP: the whole range minus the kubernetes Service's is free.
  const list = await ts.json("GET", "/api/v1/services");
  assertEquals(list.body.items.map((s: any) => s.metadata.name), ["kubernetes"]);
});

Deno.test("services: the kubernetes Service points at the server and comes back", async () => {
  await using ts = await testServer();
  const path = "/api/v1/namespaces/default/services/kubernetes";
  const k = await ts.json("GET", path);
  assertEquals(k.status, 200);
  assertEquals(k.body.metadata.labels, { component: "apiserver", provider: "kubernetes" });
  assertEquals(k.body.spec.clusterIP, "10.0.0.1");
  assertEquals(k.body.spec.ports, [
    { name: "https", port: 443, protocol: "TCP", targetPort: ts.server.port },
  ]);
  assertEquals((await ts.json("DELETE", path)).status, 200);
  let back: any;
  for (let i = 0; i < 250 && back?.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 20));
    back = await ts.json("GET", path);
  }
  assertEquals(back.status, 200);
  assert(back.body.metadata.uid !== k.body.metadata.uid, "a new Service");
  assertEquals(back.body.spec.clusterIP, "10.0.0.1");
});

Deno.test("services: allocations survive a restart and the records are repaired", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-services-" });
  const restart = () => testServer({ dataDir, storage: "file" });
  try {
    let ip: string;
    let nodePort: number;
    {
      await using ts = await restart();
      const created = await createAsAdmin(ts, SVCS, svc("keep", { type: "NodePort" }));
      ip = created.spec.clusterIP;
      nodePort = created.spec.ports[0].nodePort;
    }
    {
      await using ts = await restart();
      await expectInvalid(ts, svc("other", { clusterIP: ip }), [
        `spec.clusterIPs: Invalid value: ["${ip}"]: failed to allocate IP ${ip}: provided IP is already allocated`,
      ]);
      await expectInvalid(
        ts,
        svc("other", { type: "NodePort", ports: [{ port: 80, nodePort }] }),
        [`spec.ports[0].nodePort: Invalid value: ${nodePort}: provided port is already allocated`],
      );
      // The kubernetes Service now targets the new port.
      const k = await ts.json("GET", "/api/v1/namespaces/default/services/kubernetes");
      assertEquals(k.body.spec.ports[0].targetPort, ts.server.port);
      // Damage: a record lost (a Service holds its IP) and a record no Service holds.
      await ts.server.store.delete(`/registry/ranges/serviceips/${ip}`);
      await ts.server.store.create(
        "/registry/ranges/serviceips/10.0.0.77",
        JSON.stringify({ namespace: "default", name: "gone", at: 0 }),
      );
    }
    {
      // The start-up repair puts the lost record back and releases the stray one.
      await using ts = await restart();
      assertEquals(await ts.server.store.get("/registry/ranges/serviceips/10.0.0.77"), undefined);
      assert(await ts.server.store.get(`/registry/ranges/serviceips/${ip}`), "record restored");
      await expectInvalid(ts, svc("other", { clusterIP: ip }), [
        `spec.clusterIPs: Invalid value: ["${ip}"]: failed to allocate IP ${ip}: provided IP is already allocated`,
      ]);
      await createAsAdmin(ts, SVCS, svc("reuse", { clusterIP: "10.0.0.77" }));
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("services: a bad --service-cluster-ip-range fails the start", async () => {
  let err: unknown;
  try {
    await testServer({ serviceClusterIPRange: "10.0.0.0/33" });
  } catch (e) {
    err = e;
  }
  assert(err instanceof Error);
  assertEquals(
    err.message,
    '--service-cluster-ip-range: "10.0.0.0/33" is not a CIDR (e.g. 10.0.0.0/24 or fd00::/108)',
  );
});

Deno.test("services: type changes allocate and release; dry runs and finalizers", async () => {
  await using ts = await testServer();
  const held = async (ip: string) =>
    (await ts.server.store.get(`/registry/ranges/serviceips/${ip}`)) !== undefined;
  // A dry run shows an address but keeps none.
  const dry = await ts.json("POST", `${SVCS}?dryRun=All`, { body: svc("dry") });
  assertEquals(dry.status, 201, JSON.stringify(dry.body));
  assert(/^10\.0\.0\.\d+$/.test(dry.body.spec.clusterIP));
  assertEquals(await held(dry.body.spec.clusterIP), false);
  // ClusterIP -> ExternalName gives the address back; -> ClusterIP takes a new one.
  const c = await createAsAdmin(ts, SVCS, svc("flip"));
  const ip = c.spec.clusterIP;
  assert(await held(ip));
  const toExt = await ts.json("PATCH", `${SVCS}/flip`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: { spec: { type: "ExternalName", externalName: "db.example.com" } },
  });
  assertEquals(toExt.status, 200, JSON.stringify(toExt.body));
  assertEquals(toExt.body.spec.clusterIP, undefined);
  assertEquals(toExt.body.spec.ipFamilies, undefined);
  assertEquals(await held(ip), false);
  const back = await ts.json("PATCH", `${SVCS}/flip`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: { spec: { type: "ClusterIP", externalName: null } },
  });
  assertEquals(back.status, 200, JSON.stringify(back.body));
  assert(await held(back.body.spec.clusterIP));
  // A LoadBalancer with externalTrafficPolicy Local gets node ports and a health-check port.
  const lb = await createAsAdmin(
    ts,
    SVCS,
    svc("lb", { type: "LoadBalancer", externalTrafficPolicy: "Local" }),
  );
  assert(lb.spec.ports[0].nodePort >= 30000);
  assert(lb.spec.healthCheckNodePort >= 30000);
  assert(lb.spec.healthCheckNodePort !== lb.spec.ports[0].nodePort);
  assertEquals(lb.spec.allocateLoadBalancerNodePorts, true);
  const table = await ts.json("GET", `${SVCS}/lb`, {
    headers: { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
  });
  assertEquals(table.body.rows[0].cells.slice(1, 3), ["LoadBalancer", lb.spec.clusterIP]);
  assertEquals(table.body.rows[0].cells[3], "<pending>");
  // Its status is written by whatever plays the load balancer, and validated as kube does.
  const lbStatus = (ingress: unknown) =>
    ts.json("PATCH", `${SVCS}/lb/status`, {
      headers: { "Content-Type": "application/merge-patch+json" },
      body: { status: { loadBalancer: { ingress } } },
    });
  const badStatus = await lbStatus([{ ip: "not-an-ip" }, { hostname: "1.2.3.4" }]);
  assertEquals(badStatus.status, 422);
  assertEquals(causes(badStatus.body), [
    'status.loadBalancer.ingress[0].ip: Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    'status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address',
  ]);
  const goodStatus = await lbStatus([{ ip: "203.0.113.7" }]);
  assertEquals(goodStatus.status, 200, JSON.stringify(goodStatus.body));
  assertEquals(goodStatus.body.status.loadBalancer.ingress, [{ ip: "203.0.113.7", ipMode: "VIP" }]);
  const listed = await ts.json("GET", `${SVCS}/lb`, {
    headers: { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
  });
  assertEquals(listed.body.rows[0].cells[3], "203.0.113.7");
  // A Service held by a finalizer keeps its address until the finalizer goes.
  const fin = await createAsAdmin(ts, SVCS, {
    ...svc("fin"),
    metadata: { name: "fin", finalizers: ["example.com/hold"] },
  });
  assertEquals((await ts.json("DELETE", `${SVCS}/fin`)).status, 200);
  assert(await held(fin.spec.clusterIP));
  const released = await ts.json("PATCH", `${SVCS}/fin`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: { metadata: { finalizers: null } },
  });
  assertEquals(released.status, 200, JSON.stringify(released.body));
  assertEquals((await ts.json("GET", `${SVCS}/fin`)).status, 404);
  assertEquals(await held(fin.spec.clusterIP), false);
});

Deno.test("services: a dual-stack range gives PreferDualStack Services two addresses", async () => {
  await using ts = await testServer({ serviceClusterIPRange: "10.1.0.0/24,fd00:10::/112" });
  const single = await createAsAdmin(ts, SVCS, svc("single"));
  assertEquals(single.spec.ipFamilies, ["IPv4"]);
  assertEquals(single.spec.clusterIPs.length, 1);
  const dual = await createAsAdmin(ts, SVCS, svc("dual", { ipFamilyPolicy: "PreferDualStack" }));
  assertEquals(dual.spec.ipFamilies, ["IPv4", "IPv6"]);
  assert(/^10\.1\.0\.\d+$/.test(dual.spec.clusterIPs[0]), dual.spec.clusterIPs[0]);
  assert(/^fd00:10::[0-9a-f]+$/.test(dual.spec.clusterIPs[1]), dual.spec.clusterIPs[1]);
  const v6 = await createAsAdmin(ts, SVCS, svc("v6", { clusterIP: "fd00:10:0:0:0:0:0:99" }));
  assertEquals(v6.spec.clusterIPs, ["fd00:10::99"]);
  assertEquals(v6.spec.ipFamilies, ["IPv6"]);
  // Upgrading a single-stack Service adds the second address.
  const up = await ts.json("PATCH", `${SVCS}/single`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: { spec: { ipFamilyPolicy: "RequireDualStack" } },
  });
  assertEquals(up.status, 200, JSON.stringify(up.body));
  assertEquals(up.body.spec.clusterIPs.length, 2);
  assertEquals(up.body.spec.clusterIPs[0], single.spec.clusterIP);
});
