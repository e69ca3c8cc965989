/**
 * Validation of a Service's spec as kube's ValidateService and ValidateServiceUpdate check it:
 * the same rules, field paths and messages. Metadata is checked by the generic registry; the
 * rules that need the configured IP ranges and the allocation state live in services.ts.
 * Nothing here mutates its input.
 *
 * @module
 */

import {
  type FieldError,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  parseCIDR,
  parseIP,
  validateLabels,
} from "../api/mod.ts";
import type { KubeObject } from "../registry/mod.ts";

const TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS = ["SCTP", "TCP", "UDP"];
const AFFINITIES = ["ClientIP", "None"];
const TRAFFIC_POLICIES = ["Cluster", "Local"];
const IP_FAMILIES = ["IPv4", "IPv6"];
const IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"];
const TRAFFIC_DISTRIBUTIONS = ["PreferClose", "PreferSameNode", "PreferSameZone"];
/** kube's MaxClientIPServiceAffinitySeconds: one day. */
const MAX_AFFINITY_SECONDS = 86400;
const ONLY_LOAD_BALANCER = "may only be used when `type` is 'LoadBalancer'";

function supported(values: string[]): string {
  return `supported values: ${values.map((v) => JSON.stringify(v)).join(", ")}`;
}

function notSupported(field: string, value: unknown, values: string[]): FieldError {
  return { type: "NotSupported", field, value, detail: supported(values) };
}

/** kube's IsValidPortNum. */
export function portNumErrors(port: unknown): string[] {
  return Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535
    ? []
    : ["must be between 1 and 65535, inclusive"];
}

/** kube's IsValidPortName (an IANA service name). */
export function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(name)) {
    errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (!/[a-z]/.test(name)) errs.push("must contain at least one letter (a-z)");
  if (name.includes("--")) errs.push("must not contain consecutive hyphens");
  if (name.startsWith("-") || name.endsWith("-")) errs.push("must not begin or end with a hyphen");
  return errs;
}

/** `clusterIPs` is exactly `["None"]`. */
export function isHeadless(spec: KubeObject): boolean {
  return Array.isArray(spec.clusterIPs) && spec.clusterIPs.length === 1 &&
    spec.clusterIPs[0] === "None";
}

/** NodePort and LoadBalancer Services, and ClusterIP ones with external IPs. */
export function externallyAccessible(spec: KubeObject): boolean {
  return spec.type === "LoadBalancer" || spec.type === "NodePort" ||
    (spec.type === "ClusterIP" && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0);
}

/** A LoadBalancer Service with externalTrafficPolicy Local has a health-check node port. */
export function needsHealthCheck(spec: KubeObject): boolean {
  return spec.type === "LoadBalancer" && spec.externalTrafficPolicy === "Local";
}

const IP_EXAMPLE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/** Addresses a Service may not claim as external IPs (kube's ValidateNonSpecialIP). */
function specialIPErrors(text: string): string[] {
  const ip = parseIP(text)!;
  const v4 = ip.family === "IPv4";
  const inNet = (cidr: string) => {
    const c = parseCIDR(cidr)!;
    return c.family === ip.family && (ip.value >> BigInt(c.bits - c.prefix)) ===
        (c.network >> BigInt(c.bits - c.prefix));
  };
  if (ip.value === 0n) return ["may not be unspecified (0.0.0.0, ::)"];
  if (v4 ? inNet("127.0.0.0/8") : ip.value === 1n) {
    return ["may not be in the loopback range (127.0.0.0/8, ::1/128)"];
  }
  if (v4 ? inNet("169.254.0.0/16") : inNet("fe80::/10")) {
    return ["may not be in the link-local range (169.254.0.0/16, fe80::/10)"];
  }
  if (v4 ? inNet("224.0.0.0/24") : inNet("ff02::/16")) {
    return ["may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"];
  }
  return [];
}

/** kube's ValidateServiceClusterIPsRelatedFields (not for ExternalName Services). */
export function validateClusterIPFields(spec: KubeObject): FieldError[] {
  if (spec.type === "ExternalName") return [];
  const errs: FieldError[] = [];
  const ips: string[] = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
  const families: string[] = Array.isArray(spec.ipFamilies) ? spec.ipFamilies : [];
  if (spec.clusterIP) {
    if (ips.length === 0) errs.push({ type: "Required", field: "spec.clusterIPs" });
    else if (ips[0] !== spec.clusterIP) {
      errs.push({
        type: "Invalid",
        field: "spec.clusterIPs",
        value: ips,
        detail: "first value must match `clusterIP`",
      });
    }
  } else if (ips.length > 0) {
    errs.push({
      type: "Invalid",
      field: "spec.clusterIPs",
      value: ips,
      detail: "must be empty when `clusterIP` is not specified",
    });
  }
  const seen = new Set<string>();
  families.forEach((f, i) => {
    if (!IP_FAMILIES.includes(f)) errs.push(notSupported(`spec.ipFamilies[${i}]`, f, IP_FAMILIES));
    if (seen.has(f)) errs.push({ type: "Duplicate", field: `spec.ipFamilies[${i}]`, value: f });
    seen.add(f);
  });
  if (spec.ipFamilyPolicy != null && !IP_FAMILY_POLICIES.includes(spec.ipFamilyPolicy)) {
    errs.push(notSupported("spec.ipFamilyPolicy", spec.ipFamilyPolicy, IP_FAMILY_POLICIES));
  }
  let badIPs = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === "None") {
      if (ips.length > 1) {
        badIPs = true;
        errs.push({
          type: "Invalid",
          field: "spec.clusterIPs",
          value: ips,
          detail: "'None' must be the first and only value",
        });
      }
      return;
    }
    if (!parseIP(ip)) {
      badIPs = true;
      errs.push({ type: "Invalid", field: `spec.clusterIPs[${i}]`, value: ip, detail: IP_EXAMPLE });
    }
  });
  if (ips.length > 2) {
    errs.push({
      type: "Invalid",
      field: "spec.clusterIPs",
      value: ips,
      detail: "may only hold up to 2 values",
    });
  }
  if (badIPs) return errs;
  if (ips.length === 2 && parseIP(ips[0])!.family === parseIP(ips[1])!.family) {
    errs.push({
      type: "Invalid",
      field: "spec.clusterIPs",
      value: ips,
      detail: "may specify no more than one IP for each IP family",
    });
  }
  if (!isHeadless(spec)) {
    ips.forEach((ip, i) => {
      if (i >= families.length) return;
      const family = parseIP(ip)?.family;
      if (families[i] === "IPv4" && family === "IPv6") {
        errs.push({
          type: "Invalid",
          field: `spec.clusterIPs[${i}]`,
          value: ip,
          detail: `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``,
        });
      }
      if (families[i] === "IPv6" && family !== "IPv6") {
        errs.push({
          type: "Invalid",
          field: `spec.clusterIPs[${i}]`,
          value: ip,
          detail: `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``,
        });
      }
    });
  }
  return errs;
}

function validatePorts(spec: KubeObject, errs: FieldError[]): void {
  const ports: KubeObject[] = Array.isArray(spec.ports) ? spec.ports : [];
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const at = `spec.ports[${i}]`;
    if (ports.length > 1 && !p.name) errs.push({ type: "Required", field: `${at}.name` });
    else if (p.name) {
      for (const msg of isDNS1123Label(p.name)) {
        errs.push({ type: "Invalid", field: `${at}.name`, value: p.name, detail: msg });
      }
      if (names.has(p.name)) errs.push({ type: "Duplicate", field: `${at}.name`, value: p.name });
      names.add(p.name);
    }
    for (const msg of portNumErrors(p.port)) {
      errs.push({ type: "Invalid", field: `${at}.port`, value: p.port ?? 0, detail: msg });
    }
    if (!p.protocol) errs.push({ type: "Required", field: `${at}.protocol` });
    else if (!PROTOCOLS.includes(p.protocol)) {
      errs.push(notSupported(`${at}.protocol`, p.protocol, PROTOCOLS));
    }
    const target = p.targetPort;
    const targetErrors = typeof target === "string"
      ? portNameErrors(target)
      : portNumErrors(target);
    for (const msg of targetErrors) {
      errs.push({ type: "Invalid", field: `${at}.targetPort`, value: target, detail: msg });
    }
    if (typeof p.appProtocol === "string") {
      for (const msg of isQualifiedName(p.appProtocol)) {
        errs.push({
          type: "Invalid",
          field: `${at}.appProtocol`,
          value: p.appProtocol,
          detail: msg,
        });
      }
    }
  });
  if (spec.type === "ClusterIP") {
    ports.forEach((p, i) => {
      if (p.nodePort) {
        errs.push({
          type: "Forbidden",
          field: `spec.ports[${i}].nodePort`,
          detail: "may not be used when `type` is 'ClusterIP'",
        });
      }
    });
  }
  // Node ports and ports are unique per protocol.
  const nodePorts = new Set<string>();
  const servicePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (p.nodePort) {
      const key = `${p.protocol}/${p.nodePort}`;
      if (nodePorts.has(key)) {
        errs.push({ type: "Duplicate", field: `spec.ports[${i}].nodePort`, value: p.nodePort });
      }
      nodePorts.add(key);
    }
    const key = `${p.protocol}/${p.port}`;
    if (servicePorts.has(key)) {
      errs.push({
        type: "Duplicate",
        field: `spec.ports[${i}]`,
        value: { port: p.port, protocol: p.protocol },
      });
    }
    servicePorts.add(key);
  });
}

function validateAffinity(spec: KubeObject, errs: FieldError[]): void {
  if (!spec.sessionAffinity) errs.push({ type: "Required", field: "spec.sessionAffinity" });
  else if (!AFFINITIES.includes(spec.sessionAffinity)) {
    errs.push(notSupported("spec.sessionAffinity", spec.sessionAffinity, AFFINITIES));
  }
  const config = spec.sessionAffinityConfig;
  if (spec.sessionAffinity === "ClientIP") {
    const when = "when session affinity type is ClientIP";
    if (!config) errs.push({ type: "Required", field: "spec.sessionAffinityConfig", detail: when });
    else if (!config.clientIP) {
      errs.push({ type: "Required", field: "spec.sessionAffinityConfig.clientIP", detail: when });
    } else {
      const t = config.clientIP.timeoutSeconds;
      if (!(Number.isInteger(t) && t > 0 && t <= MAX_AFFINITY_SECONDS)) {
        errs.push({
          type: "Invalid",
          field: "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
          value: t ?? null,
          detail: `must be greater than 0 and less than ${MAX_AFFINITY_SECONDS}`,
        });
      }
    }
  } else if (spec.sessionAffinity === "None" && config) {
    errs.push({
      type: "Forbidden",
      field: "spec.sessionAffinityConfig",
      detail: "must not be set when session affinity is None",
    });
  }
}

function validateTypeSpecific(spec: KubeObject, errs: FieldError[]): void {
  const ips: string[] = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
  switch (spec.type) {
    case "LoadBalancer":
    case "NodePort":
      if (isHeadless(spec)) {
        errs.push({
          type: "Invalid",
          field: "spec.clusterIPs[0]",
          value: ips[0],
          detail: `may not be set to 'None' for ${spec.type} services`,
        });
      }
      break;
    case "ExternalName": {
      const forbid = (field: string) =>
        errs.push({ type: "Forbidden", field, detail: "may not be set for ExternalName services" });
      if (ips.length > 0) forbid("spec.clusterIPs");
      if (Array.isArray(spec.ipFamilies) && spec.ipFamilies.length > 0) forbid("spec.ipFamilies");
      if (spec.ipFamilyPolicy != null) forbid("spec.ipFamilyPolicy");
      // A trailing dot marks the name fully qualified.
      const cname = String(spec.externalName ?? "").replace(/\.$/, "");
      if (!cname) errs.push({ type: "Required", field: "spec.externalName" });
      for (const msg of cname ? isDNS1123Subdomain(cname) : []) {
        errs.push({ type: "Invalid", field: "spec.externalName", value: cname, detail: msg });
      }
      break;
    }
  }
}

function validateLoadBalancerFields(spec: KubeObject, errs: FieldError[]): void {
  const ranges: string[] = Array.isArray(spec.loadBalancerSourceRanges)
    ? spec.loadBalancerSourceRanges
    : [];
  if (ranges.length > 0) {
    // kube's path, capital L included.
    const at = "spec.LoadBalancerSourceRanges";
    if (spec.type !== "LoadBalancer") {
      errs.push({ type: "Forbidden", field: at, detail: ONLY_LOAD_BALANCER });
    }
    ranges.forEach((r, i) => {
      if (!parseCIDR(r.trim())) {
        errs.push({
          type: "Invalid",
          field: `${at}[${i}]`,
          value: r.trim(),
          detail: "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        });
      }
    });
  }
  if (spec.allocateLoadBalancerNodePorts != null && spec.type !== "LoadBalancer") {
    errs.push({
      type: "Forbidden",
      field: "spec.allocateLoadBalancerNodePorts",
      detail: ONLY_LOAD_BALANCER,
    });
  }
  if (spec.loadBalancerClass != null) {
    if (spec.type !== "LoadBalancer") {
      errs.push({ type: "Forbidden", field: "spec.loadBalancerClass", detail: ONLY_LOAD_BALANCER });
    } else {
      for (const msg of isQualifiedName(spec.loadBalancerClass)) {
        errs.push({
          type: "Invalid",
          field: "spec.loadBalancerClass",
          value: spec.loadBalancerClass,
          detail: msg,
        });
      }
    }
  }
}

function validateTrafficFields(spec: KubeObject, errs: FieldError[]): void {
  if (!externallyAccessible(spec)) {
    if (spec.externalTrafficPolicy) {
      errs.push({
        type: "Invalid",
        field: "spec.externalTrafficPolicy",
        value: spec.externalTrafficPolicy,
        detail: "may only be set for externally-accessible services",
      });
    }
  } else if (!spec.externalTrafficPolicy) {
    errs.push({ type: "Required", field: "spec.externalTrafficPolicy" });
  } else if (!TRAFFIC_POLICIES.includes(spec.externalTrafficPolicy)) {
    errs.push(
      notSupported("spec.externalTrafficPolicy", spec.externalTrafficPolicy, TRAFFIC_POLICIES),
    );
  }
  // A needed health-check node port is allocated after validation, when not given.
  if (spec.healthCheckNodePort) {
    if (!needsHealthCheck(spec)) {
      errs.push({
        type: "Invalid",
        field: "spec.healthCheckNodePort",
        value: spec.healthCheckNodePort,
        detail: "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is " +
          "'Local'",
      });
    } else {
      for (const msg of portNumErrors(spec.healthCheckNodePort)) {
        errs.push({
          type: "Invalid",
          field: "spec.healthCheckNodePort",
          value: spec.healthCheckNodePort,
          detail: msg,
        });
      }
    }
  }
  const itp = spec.internalTrafficPolicy;
  if (itp == null && ["ClusterIP", "NodePort", "LoadBalancer"].includes(spec.type)) {
    errs.push({ type: "Required", field: "spec.internalTrafficPolicy" });
  } else if (itp != null && !TRAFFIC_POLICIES.includes(itp)) {
    errs.push(notSupported("spec.internalTrafficPolicy", itp, TRAFFIC_POLICIES));
  }
  const td = spec.trafficDistribution;
  if (td != null && !TRAFFIC_DISTRIBUTIONS.includes(td)) {
    errs.push(notSupported("spec.trafficDistribution", td, TRAFFIC_DISTRIBUTIONS));
  }
}

/** kube's ValidateService, for the spec (the object's defaults already set). */
export function validateService(svc: KubeObject): FieldError[] {
  const spec: KubeObject = svc.spec ?? {};
  const errs: FieldError[] = [];
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  if (ports.length === 0 && !isHeadless(spec) && spec.type !== "ExternalName") {
    errs.push({ type: "Required", field: "spec.ports" });
  }
  validateTypeSpecific(spec, errs);
  validatePorts(spec, errs);
  if (spec.selector != null) errs.push(...validateLabels(spec.selector, "spec.selector"));
  validateAffinity(spec, errs);
  errs.push(...validateClusterIPFields(spec));
  const externalIPs: string[] = Array.isArray(spec.externalIPs) ? spec.externalIPs : [];
  externalIPs.forEach((ip, i) => {
    const at = `spec.externalIPs[${i}]`;
    const msgs = parseIP(ip) ? specialIPErrors(ip) : [IP_EXAMPLE];
    for (const msg of msgs) errs.push({ type: "Invalid", field: at, value: ip, detail: msg });
  });
  if (!spec.type) errs.push({ type: "Required", field: "spec.type" });
  else if (!TYPES.includes(spec.type)) errs.push(notSupported("spec.type", spec.type, TYPES));
  validateLoadBalancerFields(spec, errs);
  validateTrafficFields(spec, errs);
  return errs;
}

/** kube's ValidateLoadBalancerStatus, for a `/status` write. */
export function validateServiceStatus(svc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const ingress: KubeObject[] = Array.isArray(svc.status?.loadBalancer?.ingress)
    ? svc.status.loadBalancer.ingress
    : [];
  // kube 1.32: only a LoadBalancer has ingress points (the deprecated gate
  // AllowServiceLBStatusOnNonLB, locked to false, once let other types have them).
  if (svc.spec?.type !== "LoadBalancer" && ingress.length > 0) {
    errs.push({
      type: "Forbidden",
      field: "status.loadBalancer.ingress",
      detail: "may only be used when `spec.type` is 'LoadBalancer'",
    });
    return errs;
  }
  ingress.forEach((ing, i) => {
    const at = `status.loadBalancer.ingress[${i}]`;
    if (ing.ip && !parseIP(ing.ip)) {
      errs.push({ type: "Invalid", field: `${at}.ip`, value: ing.ip, detail: IP_EXAMPLE });
    }
    if (ing.ipMode != null && !ing.ip) {
      errs.push({
        type: "Forbidden",
        field: `${at}.ipMode`,
        detail: "may not be specified when `ip` is not",
      });
    } else if (ing.ipMode != null && !["Proxy", "VIP"].includes(ing.ipMode)) {
      errs.push(notSupported(`${at}.ipMode`, ing.ipMode, ["Proxy", "VIP"]));
    }
    if (ing.hostname) {
      for (const msg of isDNS1123Subdomain(ing.hostname)) {
        errs.push({ type: "Invalid", field: `${at}.hostname`, value: ing.hostname, detail: msg });
      }
      if (parseIP(ing.hostname)) {
        errs.push({
          type: "Invalid",
          field: `${at}.hostname`,
          value: ing.hostname,
          detail: "must be a DNS name, not an IP address",
        });
      }
    }
  });
  return errs;
}

const sameList = (a: unknown, b: unknown) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

/** kube's ValidateServiceUpdate: what may not change, then {@link validateService}. */
export function validateServiceUpdate(svc: KubeObject, old: KubeObject): FieldError[] {
  const spec: KubeObject = svc.spec ?? {};
  const was: KubeObject = old.spec ?? {};
  const errs: FieldError[] = [];
  const onExternalName = spec.type === "ExternalName" || was.type === "ExternalName";
  if (!onExternalName && !(isHeadless(spec) && isHeadless(was))) {
    const ips: string[] = spec.clusterIPs ?? [];
    const oldIPs: string[] = was.clusterIPs ?? [];
    const changed = (field: string) =>
      errs.push({ type: "Invalid", field, value: ips, detail: "may not change once set" });
    if (ips.length === oldIPs.length) {
      oldIPs.forEach((ip, i) => {
        if (ip !== ips[i]) changed(`spec.clusterIPs[${i}]`);
      });
    } else if (ips.length < oldIPs.length) {
      if (ips.length === 0) {
        errs.push({
          type: "Invalid",
          field: "spec.clusterIPs[0]",
          value: ips,
          detail: "primary clusterIP can not be unset",
        });
      } else if (ips[0] !== oldIPs[0]) changed("spec.clusterIPs[0]");
      if (ips.length === 1 && spec.ipFamilyPolicy !== "SingleStack") {
        errs.push({
          type: "Invalid",
          field: "spec.ipFamilyPolicy",
          value: spec.ipFamilyPolicy ?? null,
          detail: "must be set to 'SingleStack' when releasing the secondary clusterIP",
        });
      }
    } else if (oldIPs.length > 0 && ips[0] !== oldIPs[0]) changed("spec.clusterIPs[0]");
  }
  if (!onExternalName && isHeadless(spec) === isHeadless(was) && !isHeadless(spec)) {
    const fams: string[] = spec.ipFamilies ?? [];
    const oldFams: string[] = was.ipFamilies ?? [];
    if (fams.length === oldFams.length ? !sameList(fams, oldFams) : fams[0] !== oldFams[0]) {
      if (fams.length > 0 || oldFams.length === 0) {
        errs.push({
          type: "Invalid",
          field: "spec.ipFamilies[0]",
          value: fams,
          detail: "may not change once set",
        });
      }
    }
  }
  if (
    spec.type === "LoadBalancer" && was.type === "LoadBalancer" &&
    (spec.loadBalancerClass ?? null) !== (was.loadBalancerClass ?? null)
  ) {
    errs.push({
      type: "Invalid",
      field: "spec.loadBalancerClass",
      value: spec.loadBalancerClass ?? null,
      detail: "may not change once set",
    });
  }
  if (
    needsHealthCheck(spec) && needsHealthCheck(was) &&
    spec.healthCheckNodePort !== was.healthCheckNodePort
  ) {
    errs.push({
      type: "Forbidden",
      field: "spec.healthCheckNodePort",
      detail: "field is immutable",
    });
  }
  return [...errs, ...validateService(svc)];
}
