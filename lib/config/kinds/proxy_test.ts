import assert from "node:assert/strict";
import { checkKindDocument } from "./registry.ts";

const VERSIONS = ["proxy.config.platform.io/v1alpha1", "kubeproxy.config.k8s.io/v1alpha1"];
const proxy = (fields: Record<string, unknown> = {}, apiVersion = VERSIONS[1]) => ({
  apiVersion,
  kind: "KubeProxyConfiguration",
  ...fields,
});
const errorsOf = (doc: Record<string, unknown>) => checkKindDocument(doc).errors;

Deno.test("KubeProxyConfiguration parts: kube's defaults under both apiVersions", () => {
  for (const apiVersion of VERSIONS) {
    const { errors, defaulted } = checkKindDocument(
      proxy({ clusterCIDR: "10.0.0.0/8" }, apiVersion),
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(defaulted, {
      apiVersion,
      kind: "KubeProxyConfiguration",
      clusterCIDR: "10.0.0.0/8",
      mode: "",
      iptables: {
        masqueradeBit: 14,
        masqueradeAll: false,
        localhostNodePorts: true,
        syncPeriod: "30s",
        minSyncPeriod: "1s",
      },
      ipvs: {
        syncPeriod: "30s",
        minSyncPeriod: "0s",
        scheduler: "",
        excludeCIDRs: [],
        strictARP: false,
        tcpTimeout: "0s",
        tcpFinTimeout: "0s",
        udpTimeout: "0s",
      },
      nftables: { masqueradeBit: 14, masqueradeAll: false, syncPeriod: "30s", minSyncPeriod: "1s" },
      winkernel: {
        networkName: "",
        sourceVip: "",
        enableDSR: false,
        rootHnsEndpointName: "",
        forwardHealthCheckVip: false,
      },
    });
  }
  // minSyncPeriod 0 is kept: resync on every change.
  const zero = checkKindDocument(proxy({ iptables: { minSyncPeriod: "0s" }, mode: "ipvs" }));
  assert.equal((zero.defaulted?.iptables as Record<string, unknown>).minSyncPeriod, "0s");
});

Deno.test("KubeProxyConfiguration parts: mode, masquerade bits, sync periods, ipvs settings", () => {
  assert.deepEqual(
    errorsOf(proxy({
      mode: "userspace",
      iptables: { masqueradeBit: 32, syncPeriod: "-1s", minSyncPeriod: "-1s" },
      nftables: { masqueradeBit: -1, syncPeriod: "10s", minSyncPeriod: "20s" },
      ipvs: {
        syncPeriod: "5s",
        scheduler: "fastest",
        excludeCIDRs: ["10.0.0.0/8", "fd00::/8", "10.0.0.0"],
        tcpTimeout: "-1s",
        udpTimeout: "-2s",
      },
    })),
    [
      'mode: Unsupported value: "userspace": supported values: "iptables", "ipvs", "nftables", "kernelspace"',
      "iptables.masqueradeBit: Invalid value: 32: must be within the range [0, 31]",
      'iptables.syncPeriod: Invalid value: "-1s": must be greater than 0',
      'iptables.minSyncPeriod: Invalid value: "-1s": must be greater than or equal to 0',
      "nftables.masqueradeBit: Invalid value: -1: must be within the range [0, 31]",
      'nftables.syncPeriod: Invalid value: "20s": must be greater than or equal to nftables.minSyncPeriod',
      'ipvs.scheduler: Invalid value: "fastest": must be in [rr wrr lc wlc lblc lblcr sh dh sed nq mh], blank means the default algorithm method (currently rr)',
      'ipvs.excludeCIDRs[2]: Invalid value: "10.0.0.0": must be a valid CIDR',
      'ipvs.tcpTimeout: Invalid value: "-1s": must be greater than or equal to 0',
      'ipvs.udpTimeout: Invalid value: "-2s": must be greater than or equal to 0',
    ],
  );
  assert.deepEqual(errorsOf(proxy({ iptables: { masqueradeAll: "yes" } })), [
    'iptables.masqueradeAll: Invalid value: "yes": must be a boolean',
  ]);
  assert.deepEqual(errorsOf(proxy({ winkernel: { enableDsr: true } })), [
    "winkernel.enableDsr: unknown field",
  ]);
  for (const mode of ["iptables", "ipvs", "nftables", "kernelspace", ""]) {
    assert.deepEqual(errorsOf(proxy({ mode })), [], mode);
  }
});
