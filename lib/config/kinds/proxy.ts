/**
 * The proxy configuration parts of spec 03, read as a KubeProxyConfiguration
 * (`proxy.config.platform.io/v1alpha1`, kube's `kubeproxy.config.k8s.io/v1alpha1`): `mode`
 * and the `iptables`, `ipvs`, `nftables` and `winkernel` settings, with kube's defaults and
 * validation. kube-proxy's other top-level fields (`bindAddress`, `conntrack`, …) are
 * accepted as they are and not checked: spec 03 does not describe them.
 *
 * Field paths are the file's (`iptables.syncPeriod`), where kube-proxy names its Go types
 * (`KubeProxyConfiguration.KubeProxyIPTablesConfiguration.SyncPeriod`).
 *
 * @module
 */

import { z } from "zod";
import {
  child,
  type ConfigKind,
  defaultDuration,
  duration,
  type FieldErrors,
  int32,
  kindCheck,
  ms,
  normalDuration,
  type Obj,
} from "./common.ts";

export const PROXY_KIND = "KubeProxyConfiguration";
export const PROXY_API_VERSIONS = [
  "proxy.config.platform.io/v1alpha1",
  "kubeproxy.config.k8s.io/v1alpha1",
] as const;

/** The proxy modes: `iptables`, `ipvs`, `nftables` on Linux, `kernelspace` on Windows. */
export const PROXY_MODES = ["", "iptables", "ipvs", "nftables", "kernelspace"];
const IPVS_SCHEDULERS = ["rr", "wrr", "lc", "wlc", "lblc", "lblcr", "sh", "dh", "sed", "nq", "mh"];

/** kube-proxy's top-level fields outside spec 03, passed through unchecked. */
const OTHER_FIELDS = [
  "featureGates",
  "clientConnection",
  "hostnameOverride",
  "bindAddress",
  "healthzBindAddress",
  "metricsBindAddress",
  "bindAddressHardFail",
  "enableProfiling",
  "showHiddenMetricsForVersion",
  "logging",
  "detectLocalMode",
  "detectLocal",
  "clusterCIDR",
  "nodePortAddresses",
  "oomScoreAdj",
  "conntrack",
  "configSyncPeriod",
  "portRange",
  "windowsRunAsService",
  "syncPeriod",
  "minSyncPeriod",
  "linux",
  "windows",
];

const iptablesSchema = z.strictObject({
  masqueradeBit: int32.nullish(),
  masqueradeAll: z.boolean().optional(),
  localhostNodePorts: z.boolean().nullish(),
  syncPeriod: duration.optional(),
  minSyncPeriod: duration.optional(),
});
const nftablesSchema = z.strictObject({
  masqueradeBit: int32.nullish(),
  masqueradeAll: z.boolean().optional(),
  syncPeriod: duration.optional(),
  minSyncPeriod: duration.optional(),
});
const ipvsSchema = z.strictObject({
  syncPeriod: duration.optional(),
  minSyncPeriod: duration.optional(),
  scheduler: z.string().optional(),
  excludeCIDRs: z.array(z.string()).nullish(),
  strictARP: z.boolean().optional(),
  tcpTimeout: duration.optional(),
  tcpFinTimeout: duration.optional(),
  udpTimeout: duration.optional(),
});
const winkernelSchema = z.strictObject({
  networkName: z.string().optional(),
  sourceVip: z.string().optional(),
  enableDSR: z.boolean().optional(),
  rootHnsEndpointName: z.string().optional(),
  forwardHealthCheckVip: z.boolean().optional(),
});

const proxySchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  mode: z.string().optional(),
  iptables: iptablesSchema.optional(),
  ipvs: ipvsSchema.optional(),
  nftables: nftablesSchema.optional(),
  winkernel: winkernelSchema.optional(),
  ...Object.fromEntries(OTHER_FIELDS.map((f) => [f, z.unknown().optional()])),
});
type ProxyConfig = z.infer<typeof proxySchema>;

function defaultProxy(c: ProxyConfig): Obj {
  const others = Object.fromEntries(
    OTHER_FIELDS.filter((f) => (c as Obj)[f] !== undefined).map((f) => [f, (c as Obj)[f]]),
  );
  const ipt = c.iptables;
  const nft = c.nftables;
  const ipvs = c.ipvs;
  const win = c.winkernel;
  return {
    apiVersion: c.apiVersion,
    kind: c.kind,
    ...others,
    mode: c.mode ?? "",
    iptables: {
      masqueradeBit: ipt?.masqueradeBit ?? 14,
      masqueradeAll: ipt?.masqueradeAll ?? false,
      localhostNodePorts: ipt?.localhostNodePorts ?? true,
      syncPeriod: defaultDuration(ipt?.syncPeriod, "30s"),
      minSyncPeriod: ipt?.minSyncPeriod === undefined ? "1s" : normalDuration(ipt.minSyncPeriod),
    },
    ipvs: {
      syncPeriod: defaultDuration(ipvs?.syncPeriod, "30s"),
      minSyncPeriod: normalDuration(ipvs?.minSyncPeriod),
      scheduler: ipvs?.scheduler ?? "",
      excludeCIDRs: ipvs?.excludeCIDRs ?? [],
      strictARP: ipvs?.strictARP ?? false,
      tcpTimeout: normalDuration(ipvs?.tcpTimeout),
      tcpFinTimeout: normalDuration(ipvs?.tcpFinTimeout),
      udpTimeout: normalDuration(ipvs?.udpTimeout),
    },
    nftables: {
      masqueradeBit: nft?.masqueradeBit ?? 14,
      masqueradeAll: nft?.masqueradeAll ?? false,
      syncPeriod: defaultDuration(nft?.syncPeriod, "30s"),
      minSyncPeriod: nft?.minSyncPeriod === undefined ? "1s" : normalDuration(nft.minSyncPeriod),
    },
    winkernel: {
      networkName: win?.networkName ?? "",
      sourceVip: win?.sourceVip ?? "",
      enableDSR: win?.enableDSR ?? false,
      rootHnsEndpointName: win?.rootHnsEndpointName ?? "",
      forwardHealthCheckVip: win?.forwardHealthCheckVip ?? false,
    },
  };
}

/** The sync periods every mode has: the period above 0, the minimum not negative nor above. */
function validateSync(c: Obj, path: string, errs: FieldErrors): void {
  if (ms(c.syncPeriod) <= 0) {
    errs.invalid(child(path, "syncPeriod"), c.syncPeriod, "must be greater than 0");
  }
  if (ms(c.minSyncPeriod) < 0) {
    errs.invalid(
      child(path, "minSyncPeriod"),
      c.minSyncPeriod,
      "must be greater than or equal to 0",
    );
  } else if (ms(c.minSyncPeriod) > ms(c.syncPeriod)) {
    errs.invalid(
      child(path, "syncPeriod"),
      c.minSyncPeriod,
      `must be greater than or equal to ${child(path, "minSyncPeriod")}`,
    );
  }
}

function validateMasqueradeBit(c: Obj, path: string, errs: FieldErrors): void {
  const bit = c.masqueradeBit as number;
  if (bit < 0 || bit > 31) {
    errs.invalid(child(path, "masqueradeBit"), bit, "must be within the range [0, 31]");
  }
}

/** An IPv4 or IPv6 CIDR such as `10.0.0.0/8`. */
function isCidr(text: string): boolean {
  const m = /^(.+)\/(\d{1,3})$/.exec(text);
  if (!m) return false;
  const [, ip, bits] = m;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) {
    return ip.split(".").every((o) => Number(o) <= 255) && Number(bits) <= 32;
  }
  try {
    new URL(`http://[${ip}]/`);
    return ip.includes(":") && Number(bits) <= 128;
  } catch {
    return false;
  }
}

function validateProxy(c: Obj, errs: FieldErrors): void {
  if (!PROXY_MODES.includes(c.mode as string)) {
    errs.notSupported("mode", c.mode, PROXY_MODES.slice(1));
  }
  const ipt = c.iptables as Obj;
  validateMasqueradeBit(ipt, "iptables", errs);
  validateSync(ipt, "iptables", errs);
  const nft = c.nftables as Obj;
  validateMasqueradeBit(nft, "nftables", errs);
  validateSync(nft, "nftables", errs);
  const ipvs = c.ipvs as Obj;
  validateSync(ipvs, "ipvs", errs);
  if (ipvs.scheduler !== "" && !IPVS_SCHEDULERS.includes(ipvs.scheduler as string)) {
    errs.invalid(
      "ipvs.scheduler",
      ipvs.scheduler,
      `must be in [${
        IPVS_SCHEDULERS.join(" ")
      }], blank means the default algorithm method (currently rr)`,
    );
  }
  (ipvs.excludeCIDRs as string[]).forEach((cidr, i) => {
    if (!isCidr(cidr)) errs.invalid(`ipvs.excludeCIDRs[${i}]`, cidr, "must be a valid CIDR");
  });
  for (const t of ["tcpTimeout", "tcpFinTimeout", "udpTimeout"]) {
    if (ms(ipvs[t]) < 0) errs.invalid(`ipvs.${t}`, ipvs[t], "must be greater than or equal to 0");
  }
}

export const proxyKind: ConfigKind = {
  kind: PROXY_KIND,
  apiVersions: PROXY_API_VERSIONS,
  check: kindCheck(proxySchema, defaultProxy, validateProxy),
};
