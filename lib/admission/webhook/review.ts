/**
 * The AdmissionReview exchange of spec 03: the request a webhook is sent, and the checks of
 * its answer. The review is spelled as the webhook speaks (`admission.platform.io/v1`, or
 * `admission.k8s.io/v1` with Kubernetes' group names throughout, for webhooks built on
 * Kubernetes libraries); answers are taken in either spelling.
 */

import { kubeGroup, type KubeObject, kubeSpelled } from "../../api/mod.ts";
import type { AdmissionAttributes } from "../attributes.ts";
import { KUBE_REVIEW_GROUP, PLATFORM_REVIEW_GROUP, type Webhook } from "./webhook.ts";

/** The resource and kind a webhook is sent: the request's own, or an equivalent one. */
export interface ReviewTarget {
  resource: { group: string; version: string; resource: string };
  subresource: string;
  kind: { group: string; version: string; kind: string };
  /** The object and old object in this target's version. */
  object?: KubeObject;
  oldObject?: KubeObject;
}

/** The `request` of an AdmissionReview: also what match conditions see as `request`. */
export function admissionRequest(
  uid: string,
  a: AdmissionAttributes,
  target: ReviewTarget,
  kubeNames: boolean,
): KubeObject {
  const group = (g: string) => kubeNames ? kubeGroup(g) : g;
  const spelled = (o: KubeObject | undefined) =>
    o === undefined ? null : kubeNames ? kubeSpelled(o) : o;
  const gvr = (r: ReviewTarget["resource"]) => ({ ...r, group: group(r.group) });
  const gvk = (k: ReviewTarget["kind"]) => ({ ...k, group: group(k.group) });
  const isNamespace = a.resource.group === "" && a.resource.resource === "namespaces";
  const request: KubeObject = {
    uid,
    kind: gvk(target.kind),
    resource: gvr(target.resource),
  };
  if (target.subresource) request.subResource = target.subresource;
  const equivalent = target.resource.group !== a.resource.group ||
    target.resource.version !== a.resource.version ||
    target.resource.resource !== a.resource.resource;
  if (equivalent) {
    request.requestKind = gvk(a.kind);
    request.requestResource = gvr(a.resource);
    if (a.subresource) request.requestSubResource = a.subresource;
  }
  if (a.name) request.name = a.name;
  // kube names a Namespace object's own name as the namespace of its requests.
  const namespace = isNamespace ? a.name : a.namespace;
  if (namespace) request.namespace = namespace;
  request.operation = a.operation;
  request.userInfo = userInfo(a);
  request.object = spelled(target.object);
  request.oldObject = spelled(target.oldObject);
  request.dryRun = a.dryRun;
  request.options = operationOptions(a, kubeNames);
  return request;
}

function userInfo(a: AdmissionAttributes): KubeObject {
  const u: KubeObject = { username: a.user.username };
  if (a.user.uid) u.uid = a.user.uid;
  if (a.user.groups.length) u.groups = [...a.user.groups];
  if (a.user.extra && Object.keys(a.user.extra).length) u.extra = a.user.extra;
  return u;
}

function operationOptions(a: AdmissionAttributes, kubeNames: boolean): KubeObject | null {
  const kind = { CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions" }[
    a.operation as "CREATE" | "UPDATE" | "DELETE"
  ];
  if (!kind) return null;
  const options: KubeObject = {
    kind,
    apiVersion: kubeNames ? "meta.k8s.io/v1" : "meta.platform.io/v1",
  };
  if (a.dryRun) options.dryRun = ["All"];
  return options;
}

/** An AdmissionReview wrapping `request`, in the webhook's spelling. */
export function reviewBody(webhook: Webhook, request: KubeObject): string {
  return JSON.stringify({
    kind: "AdmissionReview",
    apiVersion: `${webhook.reviewGroup}/v1`,
    request,
  });
}

/** A webhook's answer, checked. */
export interface AdmissionResponse {
  allowed: boolean;
  /** The denial (status of the answer), when not allowed. */
  status?: KubeObject;
  /** The decoded JSON Patch of a mutating webhook. */
  patch?: unknown[];
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** Why an answer cannot be used: the call then fails and failurePolicy decides. */
export class InvalidResponse extends Error {}

const REVIEW_API_VERSIONS = new Set([`${PLATFORM_REVIEW_GROUP}/v1`, `${KUBE_REVIEW_GROUP}/v1`]);

/** Checks the decoded body of a webhook's answer to the review `uid`. */
export function parseResponse(webhook: Webhook, uid: string, body: unknown): AdmissionResponse {
  const review = body as KubeObject;
  if (!review || typeof review !== "object" || Array.isArray(review)) {
    throw new InvalidResponse("the answer is not a JSON object");
  }
  if (review.kind !== "AdmissionReview" || !REVIEW_API_VERSIONS.has(review.apiVersion)) {
    throw new InvalidResponse(
      `expected webhook response of ${webhook.reviewGroup}/v1, Kind=AdmissionReview, got ` +
        `${review.apiVersion ?? ""}, Kind=${review.kind ?? ""}`,
    );
  }
  const r = review.response;
  if (!r || typeof r !== "object") throw new InvalidResponse("response is missing");
  if (r.uid !== uid) {
    throw new InvalidResponse(
      `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(r.uid ?? "")}`,
    );
  }
  if (typeof r.allowed !== "boolean") {
    throw new InvalidResponse("response.allowed is not a boolean");
  }
  const out: AdmissionResponse = {
    allowed: r.allowed,
    warnings: stringList(r.warnings, "response.warnings"),
    auditAnnotations: stringMap(r.auditAnnotations, "response.auditAnnotations"),
  };
  if (!r.allowed && r.status && typeof r.status === "object") out.status = r.status;
  const patchType = r.patchType ?? undefined;
  if (r.patch !== undefined && r.patch !== null && r.patch !== "") {
    if (webhook.type === "validating") {
      throw new InvalidResponse("validating webhook may not return a patch");
    }
    if (patchType !== "JSONPatch") {
      throw new InvalidResponse(`unsupported patch type ${JSON.stringify(patchType ?? "")}`);
    }
    let patch: unknown;
    try {
      patch = JSON.parse(new TextDecoder().decode(base64Bytes(String(r.patch))));
    } catch (err) {
      throw new InvalidResponse(`response.patch is not base64 JSON: ${(err as Error).message}`);
    }
    if (!Array.isArray(patch)) {
      throw new InvalidResponse("response.patch is not a JSON Patch array");
    }
    out.patch = patch;
  } else if (patchType !== undefined && patchType !== "JSONPatch") {
    throw new InvalidResponse(`unsupported patch type ${JSON.stringify(patchType)}`);
  }
  return out;
}

function base64Bytes(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

function stringList(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((w) => typeof w !== "string")) {
    throw new InvalidResponse(`${field} is not a list of strings`);
  }
  return v;
}

function stringMap(v: unknown, field: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (
    typeof v !== "object" || Array.isArray(v) || Object.values(v).some((x) => typeof x !== "string")
  ) {
    throw new InvalidResponse(`${field} is not a map of strings`);
  }
  return v as Record<string, string>;
}
