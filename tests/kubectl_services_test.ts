/**
 * Services with the real kubectl: `create service`, `get svc` with kube's columns, `-o yaml`
 * with the defaults filled, and `cluster-info` finding the control plane.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";

Deno.test({
  name: "kubectl: services",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using env = await kubectlEnv();
  const { kubectl, ok } = env;

  await t.step("cluster-info prints the control plane and exits 0", async () => {
    const out = await ok(["cluster-info"]);
    assertMatch(out, new RegExp(`Kubernetes control plane.* is running at .*${env.server.url}`));
  });

  await t.step("create service clusterip and nodeport", async () => {
    assertMatch(
      await ok(["create", "service", "clusterip", "web", "--tcp=80:8080"]),
      /service\/web created/,
    );
    assertMatch(
      await ok(["create", "service", "nodeport", "np", "--tcp=443:8443", "--node-port=30443"]),
      /service\/np created/,
    );
  });

  await t.step("get svc shows kube's columns", async () => {
    const out = await ok(["get", "svc"]);
    assertMatch(out, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\n/);
    assertMatch(out, /\nkubernetes\s+ClusterIP\s+10\.0\.0\.1\s+<none>\s+443\/TCP\s+\d+s/);
    assertMatch(out, /\nweb\s+ClusterIP\s+10\.0\.0\.\d+\s+<none>\s+80\/TCP\s+\d+s/);
    assertMatch(out, /\nnp\s+NodePort\s+10\.0\.0\.\d+\s+<none>\s+443:30443\/TCP\s+\d+s/);
    const wide = await ok(["get", "svc", "web", "-o", "wide"]);
    assertMatch(wide, /SELECTOR\n/);
    assertMatch(wide, /\nweb\s+.*\s+app=web\n/);
    // The short name and the `all` category find them too.
    assertMatch(await ok(["get", "all"]), /\nweb\s+ClusterIP/);
    assertMatch(await ok(["get", "services", "np"]), /\nnp\s+NodePort/);
  });

  await t.step("get -o yaml looks like kube's", async () => {
    const out = await ok(["get", "svc", "web", "-o", "yaml"]);
    for (
      const line of [
        "  internalTrafficPolicy: Cluster",
        "  ipFamilyPolicy: SingleStack",
        "  - IPv4",
        "  sessionAffinity: None",
        "  type: ClusterIP",
        "    targetPort: 8080",
        "    protocol: TCP",
        "  - name: 80-8080",
        "  loadBalancer: {}",
      ]
    ) {
      assert(out.includes(line + "\n"), `missing ${JSON.stringify(line)} in\n${out}`);
    }
  });

  await t.step("apply of a manifest without a cluster IP keeps the allocated one", async () => {
    const manifest = (port: number) =>
      `apiVersion: v1
kind: Service
metadata:
  name: applied
spec:
  selector: {app: applied}
  ports:
  - name: http
    port: ${port}
    targetPort: http
`;
    assertMatch(await ok(["apply", "-f", "-"], manifest(80)), /service\/applied created/);
    const ip = (await ok(["get", "svc", "applied", "-o", "jsonpath={.spec.clusterIP}"])).trim();
    assertMatch(ip, /^10\.0\.0\.\d+$/);
    assertMatch(await ok(["apply", "-f", "-"], manifest(80)), /service\/applied unchanged/);
    assertMatch(await ok(["apply", "-f", "-"], manifest(8080)), /service\/applied configured/);
    const after = JSON.parse(await ok(["get", "svc", "applied", "-o", "json"]));
    assertEquals(after.spec.clusterIP, ip);
    assertEquals(after.spec.ports, [
      { name: "http", port: 8080, protocol: "TCP", targetPort: "http" },
    ]);
    await ok(["delete", "svc", "applied"]);
  });

  await t.step("a taken node port is kube's error", async () => {
    const r = await kubectl([
      "create",
      "service",
      "nodeport",
      "np2",
      "--tcp=1:1",
      "--node-port=30443",
    ]);
    assertEquals(r.code, 1);
    assertMatch(
      r.stderr,
      /Service "np2" is invalid: spec\.ports\[0\]\.nodePort: Invalid value: 30443: provided port is already allocated/,
    );
  });

  await t.step("delete, and the kubernetes Service stays", async () => {
    assertMatch(await ok(["delete", "svc", "web", "np"]), /service "web" deleted/);
    const out = await ok(["get", "svc", "-o", "name"]);
    assertEquals(out, "service/kubernetes\n");
  });
});
