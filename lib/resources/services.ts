/**
 * Core v1 Services, stored (nothing proxies them, no endpoints follow them): kube's defaults,
 * its inference of the linked fields (clusterIP and clusterIPs, ipFamilies and ipFamilyPolicy,
 * what a type change drops), its validation (service_validation.ts), and the allocation of
 * cluster IPs and node ports (service_ips.ts) around each write.
 *
 * @module
 */

import {
  canonicalIP,
  type FieldError,
  internalError,
  invalid,
  type IPFamily,
  parseIP,
} from "../api/mod.ts";
import {
  ALL_VERBS,
  type KubeObject,
  type Reservation,
  type ResourceDefinition,
  type Strategy,
} from "../registry/mod.ts";
import { AGE } from "../codec/mod.ts";
import {
  clusterIPsOf,
  type Holder,
  nodePortsOf,
  type Refusal,
  type ServiceAllocator,
} from "./service_ips.ts";
import {
  externallyAccessible,
  isHeadless,
  needsHealthCheck,
  validateClusterIPFields,
  validateService,
  validateServiceStatus,
  validateServiceUpdate,
} from "./service_validation.ts";

/** kube's DefaultClientIPServiceAffinitySeconds: three hours. */
const DEFAULT_AFFINITY_SECONDS = 10800;

const needsClusterIP = (spec: KubeObject) => spec.type !== "ExternalName";
const needsNodePorts = (spec: KubeObject) =>
  spec.type === "NodePort" || spec.type === "LoadBalancer";
/** A LoadBalancer Service with allocateLoadBalancerNodePorts false gets only the node ports it
 * names. */
const allocatesNodePorts = (spec: KubeObject) =>
  spec.type === "NodePort" ||
  (spec.type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts !== false);
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** kube's SetDefaults_Service. */
export function setServiceDefaults(spec: KubeObject): void {
  spec.sessionAffinity ||= "None";
  if (spec.sessionAffinity === "None") delete spec.sessionAffinityConfig;
  if (
    spec.sessionAffinity === "ClientIP" &&
    spec.sessionAffinityConfig?.clientIP?.timeoutSeconds == null
  ) {
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_AFFINITY_SECONDS } };
  }
  spec.type ||= "ClusterIP";
  for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!p || typeof p !== "object") continue;
    p.protocol ||= "TCP";
    if (
      p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 ||
      p.targetPort === ""
    ) {
      p.targetPort = p.port;
    }
  }
  if (externallyAccessible(spec) && !spec.externalTrafficPolicy) {
    spec.externalTrafficPolicy = "Cluster";
  }
  if (
    spec.internalTrafficPolicy == null &&
    ["NodePort", "LoadBalancer", "ClusterIP"].includes(spec.type)
  ) {
    spec.internalTrafficPolicy = "Cluster";
  }
  if (spec.type === "LoadBalancer") spec.allocateLoadBalancerNodePorts ??= true;
}

/** Keeps clusterIP and clusterIPs in step when a client set only one of them. */
function normalizeClusterIPs(spec: KubeObject, was: KubeObject | undefined): void {
  const ips = () => (Array.isArray(spec.clusterIPs) ? spec.clusterIPs : []);
  if (!was) {
    if (spec.clusterIP && ips().length === 0) spec.clusterIPs = [spec.clusterIP];
    return;
  }
  const oldIPs: string[] = Array.isArray(was.clusterIPs) ? was.clusterIPs : [];
  // An older client that knows only clusterIP left clusterIPs out.
  if (oldIPs.length > 0 && ips().length === 0 && (was.clusterIP ?? "") === (spec.clusterIP ?? "")) {
    spec.clusterIPs = oldIPs;
  }
  if ((was.clusterIP ?? "") !== (spec.clusterIP ?? "") && same(oldIPs, ips())) {
    if (was.clusterIP && !spec.clusterIP) delete spec.clusterIPs;
    else spec.clusterIPs = [spec.clusterIP];
  }
}

/** Allocated values a client left out of an update keep their stored values (so a manifest
 * without them can be applied again). */
function patchAllocatedValues(spec: KubeObject, was: KubeObject): void {
  if (needsClusterIP(was) && needsClusterIP(spec)) {
    if (!spec.clusterIP && was.clusterIP) spec.clusterIP = was.clusterIP;
    if (!spec.clusterIPs?.length && was.clusterIPs?.length) spec.clusterIPs = was.clusterIPs;
  }
  if (needsNodePorts(was) && needsNodePorts(spec) && Array.isArray(spec.ports)) {
    const used = new Set(spec.ports.map((p: KubeObject) => p?.nodePort).filter(Boolean));
    const byName = new Map<string, number>();
    for (const p of Array.isArray(was.ports) ? was.ports : []) byName.set(p.name ?? "", p.nodePort);
    for (const p of spec.ports) {
      const old = byName.get(p?.name ?? "");
      if (p && !p.nodePort && old && !used.has(old)) p.nodePort = old;
    }
  }
  if (needsHealthCheck(was) && needsHealthCheck(spec) && !spec.healthCheckNodePort) {
    spec.healthCheckNodePort = was.healthCheckNodePort;
  }
}

/** Fields a type change makes meaningless are dropped, unless the client changed them too. */
function dropTypeDependentFields(spec: KubeObject, was: KubeObject): void {
  if (needsClusterIP(was) && !needsClusterIP(spec)) {
    if (spec.clusterIP === was.clusterIP && same(spec.clusterIPs, was.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same(spec.ipFamilies, was.ipFamilies)) delete spec.ipFamilies;
    if (spec.ipFamilyPolicy === was.ipFamilyPolicy) delete spec.ipFamilyPolicy;
  }
  const nodePortSet = (s: KubeObject) =>
    new Set(
      (Array.isArray(s.ports) ? s.ports : []).map((p: KubeObject) => p?.nodePort).filter(Boolean),
    );
  const oldPorts = nodePortSet(was);
  if (
    needsNodePorts(was) && !needsNodePorts(spec) &&
    [...nodePortSet(spec)].every((p) => oldPorts.has(p))
  ) {
    for (const p of Array.isArray(spec.ports) ? spec.ports : []) delete p.nodePort;
  }
  if (
    needsHealthCheck(was) && !needsHealthCheck(spec) &&
    spec.healthCheckNodePort === was.healthCheckNodePort
  ) {
    delete spec.healthCheckNodePort;
  }
  if (
    was.type === "LoadBalancer" && spec.type !== "LoadBalancer" &&
    spec.allocateLoadBalancerNodePorts === was.allocateLoadBalancerNodePorts
  ) {
    delete spec.allocateLoadBalancerNodePorts;
  }
  if (
    was.type === "LoadBalancer" && spec.type !== "LoadBalancer" &&
    spec.loadBalancerClass === was.loadBalancerClass
  ) {
    delete spec.loadBalancerClass;
  }
  if (
    externallyAccessible(was) && !externallyAccessible(spec) &&
    spec.externalTrafficPolicy === was.externalTrafficPolicy
  ) {
    delete spec.externalTrafficPolicy;
  }
}

/** What one write reserved and what it gives up once stored. */
class Ledger implements Reservation {
  readonly #alloc: ServiceAllocator;
  readonly ips: string[] = [];
  readonly ports: number[] = [];
  readonly releaseIPs: string[] = [];
  readonly releasePorts: number[] = [];
  constructor(alloc: ServiceAllocator) {
    this.#alloc = alloc;
  }
  async commit(): Promise<void> {
    for (const ip of this.releaseIPs) await this.#alloc.releaseIP(ip);
    for (const port of this.releasePorts) await this.#alloc.releaseNodePort(port);
  }
  async revert(): Promise<void> {
    for (const ip of this.ips) await this.#alloc.releaseIP(ip);
    for (const port of this.ports) await this.#alloc.releaseNodePort(port);
  }
}

function refused(svc: KubeObject, errors: FieldError[]): never {
  throw invalid("Service", "", svc.metadata?.name ?? "", errors);
}

/** kube's initIPFamilyFields: ipFamilyPolicy and ipFamilies from the request, the cluster IPs
 * it names and the configured families. */
function initIPFamilies(
  svc: KubeObject,
  was: KubeObject | undefined,
  configured: IPFamily[],
): void {
  const spec = svc.spec;
  if (spec.type === "ExternalName") return;
  if (spec.ipFamilyPolicy == null) {
    if (was?.spec?.ipFamilyPolicy != null) spec.ipFamilyPolicy = was.spec.ipFamilyPolicy;
    else if (spec.clusterIP === "None" && !Object.keys(spec.selector ?? {}).length) {
      spec.ipFamilyPolicy = "RequireDualStack";
    } else spec.ipFamilyPolicy = "SingleStack";
  }
  const pre = validateClusterIPFields(spec);
  if (pre.length) refused(svc, pre);
  const errs: FieldError[] = [];
  const ips: string[] = spec.clusterIPs ?? [];
  spec.ipFamilies = Array.isArray(spec.ipFamilies) ? spec.ipFamilies : [];
  if (was && spec.ipFamilyPolicy === "SingleStack") {
    if (same(spec.clusterIPs, was.spec.clusterIPs) && ips.length > 1) {
      spec.clusterIPs = ips.slice(0, 1);
    }
    if (same(spec.ipFamilies, was.spec.ipFamilies) && spec.ipFamilies.length > 1) {
      spec.ipFamilies = spec.ipFamilies.slice(0, 1);
    }
  }
  if (spec.ipFamilyPolicy === "SingleStack") {
    const why = (what: string) =>
      `must be 'RequireDualStack' or 'PreferDualStack' when multiple ${what} are specified`;
    const invalidPolicy = (detail: string) =>
      errs.push({ type: "Invalid", field: "spec.ipFamilyPolicy", value: "SingleStack", detail });
    if ((spec.clusterIPs ?? []).length === 2) invalidPolicy(why("cluster IPs"));
    if (spec.ipFamilies.length === 2) invalidPolicy(why("IP families"));
  }
  (spec.clusterIPs ?? []).forEach((ip: string, i: number) => {
    if (ip === "None" || i < spec.ipFamilies.length) return;
    const family = parseIP(ip)!.family;
    if (!configured.includes(family)) {
      errs.push({
        type: "Invalid",
        field: `spec.clusterIPs[${i}]`,
        value: spec.clusterIPs,
        detail: `${family} is not configured on this cluster`,
      });
    } else spec.ipFamilies.push(family);
  });
  if (errs.length) refused(svc, errs);
  const other = (f: IPFamily): IPFamily => (f === "IPv4" ? "IPv6" : "IPv4");
  if (spec.clusterIP === "None" && !Object.keys(spec.selector ?? {}).length) {
    // Headless without a selector: any families, the cluster's first by default.
    if (spec.ipFamilies.length === 0) spec.ipFamilies = [configured[0]];
    if (spec.ipFamilies.length < 2 && spec.ipFamilyPolicy !== "SingleStack") {
      spec.ipFamilies.push(other(spec.ipFamilies[0]));
    }
    return;
  }
  if (spec.ipFamilyPolicy === "RequireDualStack" && configured.length < 2) {
    errs.push({
      type: "Invalid",
      field: "spec.ipFamilyPolicy",
      value: spec.ipFamilyPolicy,
      detail: "this cluster is not configured for dual-stack services",
    });
  }
  spec.ipFamilies.forEach((f: IPFamily, i: number) => {
    if (!configured.includes(f)) {
      errs.push({
        type: "Invalid",
        field: `spec.ipFamilies[${i}]`,
        value: f,
        detail: "not configured on this cluster",
      });
    }
  });
  if (errs.length) refused(svc, errs);
  if (spec.ipFamilies.length === 0) spec.ipFamilies = [configured[0]];
  if (
    spec.ipFamilyPolicy !== "SingleStack" && spec.ipFamilies.length === 1 && configured.length === 2
  ) {
    spec.ipFamilies.push(other(spec.ipFamilies[0]));
  }
}

function ipRefusal(alloc: ServiceAllocator, ip: string, why: Refusal): string {
  if (why === "allocated") return `failed to allocate IP ${ip}: provided IP is already allocated`;
  const range = alloc.range(parseIP(ip)!.family)?.cidr ?? "";
  return `failed to allocate IP ${ip}: the provided IP (${ip}) is not in the valid range. ` +
    `The range of valid IPs is ${range}`;
}

function portRefusal(alloc: ServiceAllocator, why: Refusal): string {
  const { min, max } = alloc.network.nodePorts;
  return why === "allocated"
    ? "provided port is already allocated"
    : `provided port is not in the valid range. The range of valid ports is ${min}-${max}`;
}

/** Allocates the cluster IPs of the families `spec.clusterIPs` has no address for yet (all of
 * them on create), or takes the addresses it names. */
async function allocateClusterIPs(
  alloc: ServiceAllocator,
  svc: KubeObject,
  holder: Holder,
  ledger: Ledger,
  dryRun: boolean,
  from: number,
): Promise<void> {
  const spec = svc.spec;
  if (isHeadless(spec)) return;
  const ips: string[] = Array.isArray(spec.clusterIPs) ? [...spec.clusterIPs] : [];
  for (let i = from; i < spec.ipFamilies.length; i++) {
    const family: IPFamily = spec.ipFamilies[i];
    const wanted = ips[i] ? canonicalIP(ips[i]) : undefined;
    if (wanted) {
      const why = await alloc.allocateIP(wanted, holder, dryRun);
      if (why) {
        refused(svc, [{
          type: "Invalid",
          field: "spec.clusterIPs",
          value: spec.clusterIPs,
          detail: ipRefusal(alloc, ips[i], why),
        }]);
      }
      if (!dryRun) ledger.ips.push(wanted);
      ips[i] = wanted;
    } else {
      const ip = await alloc.allocateNextIP(family, holder, dryRun);
      if (!ip) throw internalError("failed to allocate a serviceIP: range is full");
      if (!dryRun) ledger.ips.push(ip);
      ips[i] = ip;
    }
  }
  spec.clusterIPs = ips;
  spec.clusterIP = ips[0];
}

/** Allocates the node ports `spec.ports` asks for (those not in `keep`, the stored ones). */
async function allocateNodePorts(
  alloc: ServiceAllocator,
  svc: KubeObject,
  holder: Holder,
  ledger: Ledger,
  dryRun: boolean,
  keep: Set<number>,
): Promise<void> {
  const spec = svc.spec;
  const ports: KubeObject[] = Array.isArray(spec.ports) ? spec.ports : [];
  // One node port serves every entry of the same port number (e.g. TCP and UDP).
  const byPort = new Map<number, number>();
  const taken = new Set<number>(keep);
  for (let i = 0; i < ports.length; i++) {
    const p = ports[i];
    if (!p.nodePort && !allocatesNodePorts(spec)) continue;
    if (!p.nodePort) {
      const requested = ports.find((q) => q.port === p.port && q.nodePort)?.nodePort;
      if (byPort.has(p.port)) {
        p.nodePort = byPort.get(p.port);
        continue;
      }
      if (!requested) {
        const port = await alloc.allocateNextNodePort(holder, dryRun);
        if (port === undefined) throw internalError("failed to allocate a nodePort: range is full");
        if (!dryRun) ledger.ports.push(port);
        p.nodePort = port;
        taken.add(port);
        byPort.set(p.port, port);
        continue;
      }
      p.nodePort = requested;
    }
    byPort.set(p.port, p.nodePort!);
    if (taken.has(p.nodePort!)) continue;
    const why = await alloc.allocateNodePort(p.nodePort!, holder, dryRun);
    if (why) {
      refused(svc, [{
        type: "Invalid",
        field: `spec.ports[${i}].nodePort`,
        value: p.nodePort,
        detail: portRefusal(alloc, why),
      }]);
    }
    if (!dryRun) ledger.ports.push(p.nodePort!);
    taken.add(p.nodePort!);
  }
  if (needsHealthCheck(spec) && !keep.has(spec.healthCheckNodePort)) {
    if (spec.healthCheckNodePort) {
      const why = await alloc.allocateNodePort(spec.healthCheckNodePort, holder, dryRun);
      if (why) {
        throw internalError(
          `failed to allocate requested HealthCheck NodePort ${spec.healthCheckNodePort}: ` +
            portRefusal(alloc, why),
        );
      }
      if (!dryRun) ledger.ports.push(spec.healthCheckNodePort);
    } else {
      const port = await alloc.allocateNextNodePort(holder, dryRun);
      if (port === undefined) {
        throw internalError("failed to allocate a HealthCheck NodePort 0: range is full");
      }
      if (!dryRun) ledger.ports.push(port);
      spec.healthCheckNodePort = port;
    }
  }
}

/** The strategy, bound to an allocator (none: Services cannot be written). */
function serviceStrategy(alloc?: ServiceAllocator): Strategy {
  const allocator = () => {
    if (!alloc) throw internalError("Service allocation is not configured on this server");
    return alloc;
  };
  const holderOf = (svc: KubeObject) => ({
    namespace: svc.metadata?.namespace ?? "",
    name: svc.metadata?.name ?? "",
  });
  /** Reverts what was reserved when a later step fails. */
  const guarded = async (ledger: Ledger, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      await ledger.revert();
      throw err;
    }
    return ledger;
  };
  return {
    specFields: ["spec"],
    prepareForCreate(obj) {
      obj.spec ??= {};
      obj.status = { loadBalancer: {} };
      setServiceDefaults(obj.spec);
      normalizeClusterIPs(obj.spec, undefined);
    },
    prepareForUpdate(obj, old, ctx) {
      if (ctx.subresource) {
        // kube's default: a load balancer ingress with an IP is a VIP.
        if (obj.spec?.type === "LoadBalancer") {
          for (const ing of obj.status?.loadBalancer?.ingress ?? []) {
            if (ing?.ip && ing.ipMode == null) ing.ipMode = "VIP";
          }
        }
        return;
      }
      obj.spec ??= {};
      setServiceDefaults(obj.spec);
      dropTypeDependentFields(obj.spec, old.spec ?? {});
      patchAllocatedValues(obj.spec, old.spec ?? {});
      normalizeClusterIPs(obj.spec, old.spec ?? {});
    },
    validateCreate: (obj) => validateService(obj),
    validateUpdate: (obj, old, ctx) =>
      ctx.subresource ? validateServiceStatus(obj) : validateServiceUpdate(obj, old),
    beginCreate(obj, _ctx, { dryRun }) {
      const a = allocator();
      const ledger = new Ledger(a);
      return guarded(ledger, async () => {
        initIPFamilies(obj, undefined, a.families);
        if (needsClusterIP(obj.spec)) {
          await allocateClusterIPs(a, obj, holderOf(obj), ledger, dryRun, 0);
        }
        if (needsNodePorts(obj.spec)) {
          await allocateNodePorts(a, obj, holderOf(obj), ledger, dryRun, new Set());
        }
      });
    },
    beginUpdate(obj, old, _ctx, { dryRun }) {
      const a = allocator();
      const ledger = new Ledger(a);
      const spec = obj.spec, was = old.spec ?? {};
      return guarded(ledger, async () => {
        initIPFamilies(obj, old, a.families);
        const oldIPs = clusterIPsOf(old);
        if (!needsClusterIP(spec)) {
          ledger.releaseIPs.push(...oldIPs);
        } else if (!needsClusterIP(was)) {
          await allocateClusterIPs(a, obj, holderOf(obj), ledger, dryRun, 0);
        } else if (!isHeadless(was) && !isHeadless(spec)) {
          const had = (was.clusterIPs ?? []).length;
          if ((spec.ipFamilies ?? []).length > had) {
            await allocateClusterIPs(a, obj, holderOf(obj), ledger, dryRun, had);
          } else if ((spec.clusterIPs ?? []).length < had) {
            ledger.releaseIPs.push(...oldIPs.slice((spec.clusterIPs ?? []).length));
          }
        }
        const oldPorts = new Set(nodePortsOf(old));
        if (needsNodePorts(spec) || needsHealthCheck(spec)) {
          await allocateNodePorts(a, obj, holderOf(obj), ledger, dryRun, oldPorts);
        }
        const kept = new Set(nodePortsOf(obj));
        ledger.releasePorts.push(...[...oldPorts].filter((p) => !kept.has(p)));
      });
    },
    async afterDelete(obj) {
      if (!alloc) return;
      for (const ip of clusterIPsOf(obj)) await alloc.releaseIP(ip).catch(() => {});
      for (const port of nodePortsOf(obj)) await alloc.releaseNodePort(port).catch(() => {});
    },
  };
}

const none = (v: string) => (v ? v : "<none>");

/** kube's EXTERNAL-IP cell. */
function externalIP(svc: KubeObject): string {
  const spec = svc.spec ?? {};
  const external: string[] = Array.isArray(spec.externalIPs) ? spec.externalIPs : [];
  switch (spec.type) {
    case "ClusterIP":
    case "NodePort":
      return none(external.join(","));
    case "LoadBalancer": {
      const ingress: KubeObject[] = svc.status?.loadBalancer?.ingress ?? [];
      let lb = ingress.map((i) => i.ip || i.hostname).filter(Boolean).join(",");
      if (lb.length > 16) lb = `${lb.slice(0, 13)}...`;
      if (external.length) return [...external, ...(lb ? [lb] : [])].join(",");
      return lb || "<pending>";
    }
    case "ExternalName":
      return spec.externalName ?? "";
  }
  return "<unknown>";
}

function portsCell(svc: KubeObject): string {
  const ports: KubeObject[] = Array.isArray(svc.spec?.ports) ? svc.spec.ports : [];
  return none(
    ports.map((p) =>
      p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`
    ).join(","),
  );
}

function selectorCell(svc: KubeObject): string {
  const selector: Record<string, string> = svc.spec?.selector ?? {};
  return none(Object.keys(selector).sort().map((k) => `${k}=${selector[k]}`).join(","));
}

/** The Service definition; `alloc` hands out cluster IPs and node ports. */
export function serviceDefinition(alloc?: ServiceAllocator): ResourceDefinition {
  return {
    group: "",
    version: "v1",
    kind: "Service",
    emptyObject: { spec: {}, status: {} },
    plural: "services",
    singular: "service",
    namespaced: true,
    shortNames: ["svc"],
    categories: ["all"],
    verbs: ALL_VERBS,
    subresources: ["status"],
    schema: "io.k8s.api.core.v1.Service",
    nameValidation: "dns1035Label",
    deleteReturnsObject: true,
    fieldSelectors: {
      "spec.clusterIP": (o) => o.spec?.clusterIP ?? "",
      "spec.type": (o) => o.spec?.type ?? "",
    },
    printerColumns: [
      {
        name: "Type",
        type: "string",
        description: "How the Service is exposed.",
        value: (o) => o.spec?.type,
      },
      {
        name: "Cluster-IP",
        type: "string",
        description: "The Service's virtual IP.",
        value: (o) => none(o.spec?.clusterIP ?? ""),
      },
      {
        name: "External-IP",
        type: "string",
        description: "Addresses outside the cluster that reach the Service.",
        value: externalIP,
      },
      { name: "Port(s)", type: "string", description: "The Service's ports.", value: portsCell },
      AGE,
      {
        name: "Selector",
        type: "string",
        priority: 1,
        description: "Labels of the pods the Service routes to.",
        value: selectorCell,
      },
    ],
    strategy: serviceStrategy(alloc),
  };
}
