/**
 * A CustomResourceDefinition's conversion webhook: one ConversionReview per batch of objects
 * (all objects of a list page in one call), sent through the admission webhooks' client, so
 * over the egress dialer's `cluster` selection, trusting the CRD's `caBundle`.
 *
 * The review's version is the first of `conversionReviewVersions` this server speaks (`v1`,
 * `v1beta1`); its group is `apiextensions.platform.io`, or `apiextensions.k8s.io` when the CRD
 * was last written under that name (webhooks built on Kubernetes' libraries decode only that
 * spelling; {@link recordReviewGroup} marks the CRD). The answer is checked as kube checks it (kind, uid, `result.status`, the number
 * of objects, their apiVersion and kind); of each object's metadata only labels and
 * annotations are taken from the webhook. Any failure is kube's 500: "conversion webhook
 * for <group/version, Kind=kind> failed: <why>", and nothing is stored or cached.
 */

import { internalError } from "../api/mod.ts";
import { CallError, type Webhook, WebhookClient } from "../admission/mod.ts";
import type { HttpClientFactory } from "../egress/mod.ts";
import type { KubeObject, StrategyContext } from "../registry/mod.ts";

/** The ConversionReview group this server sends. */
export const CONVERSION_REVIEW_GROUP = "apiextensions.platform.io";
/** Kubernetes' spelling of it: sent to the webhooks of CRDs written under it, and accepted in
 * every answer. */
export const KUBE_CONVERSION_REVIEW_GROUP = "apiextensions.k8s.io";
/** Marks a CRD written under `apiextensions.k8s.io`. */
export const REVIEW_GROUP_ANNOTATION = "apiextensions.platform.io/review-group";
/** The review versions this server speaks, in kube's order of preference. */
export const CONVERSION_REVIEW_VERSIONS = ["v1", "v1beta1"];
/** kube gives conversion webhooks no timeout setting; calls end after this. */
const CONVERSION_TIMEOUT_MS = 30_000;

export interface ConversionWebhookOptions {
  /** The client calls go through (one per CRD controller: its connections are kept). */
  client: WebhookClient;
}

/** The client conversion webhooks are called with: over `createHttpClient` (the egress
 * dialer's `cluster` selection; default direct). */
export function conversionClient(createHttpClient?: HttpClientFactory): WebhookClient {
  return new WebhookClient({ createHttpClient });
}

export class ConversionWebhook {
  readonly #webhook: Webhook;
  readonly #reviewGroup: string;
  readonly #reviewVersion: string | undefined;
  readonly #client: WebhookClient;

  constructor(crd: KubeObject, opts: ConversionWebhookOptions) {
    const hook = crd.spec?.conversion?.webhook ?? {};
    const versions: unknown[] = Array.isArray(hook.conversionReviewVersions)
      ? hook.conversionReviewVersions
      : [];
    this.#reviewVersion = versions.find((v): v is string =>
      typeof v === "string" && CONVERSION_REVIEW_VERSIONS.includes(v)
    );
    this.#reviewGroup =
      crd.metadata?.annotations?.[REVIEW_GROUP_ANNOTATION] === KUBE_CONVERSION_REVIEW_GROUP
        ? KUBE_CONVERSION_REVIEW_GROUP
        : CONVERSION_REVIEW_GROUP;
    this.#webhook = callTarget(String(crd.metadata?.name ?? ""), hook.clientConfig ?? {});
    this.#client = opts.client;
  }

  /** `objs` converted to `desiredAPIVersion`, in one call; the same order. */
  async convert(objs: KubeObject[], desiredAPIVersion: string): Promise<KubeObject[]> {
    const first = objs[0] ?? {};
    const gvk = `${first.apiVersion ?? ""}, Kind=${first.kind ?? ""}`;
    const fail = (why: string) => internalError(`conversion webhook for ${gvk} failed: ${why}`);
    if (!this.#reviewVersion) throw fail("no supported conversion review versions");
    const uid = crypto.randomUUID();
    const review = {
      kind: "ConversionReview",
      apiVersion: `${this.#reviewGroup}/${this.#reviewVersion}`,
      request: { uid, desiredAPIVersion, objects: objs },
    };
    let answer: unknown;
    try {
      answer = await this.#client.call(this.#webhook, JSON.stringify(review));
    } catch (err) {
      if (err instanceof CallError) throw fail(err.message);
      throw err;
    }
    let converted: KubeObject[];
    try {
      converted = convertedObjects(answer, this.#reviewVersion, uid);
    } catch (err) {
      throw fail((err as Error).message);
    }
    if (converted.length !== objs.length) {
      throw internalError(
        `conversion webhook for ${gvk} returned ${converted.length} objects, expected ${objs.length}`,
      );
    }
    return converted.map((out, i) => {
      const why = checkConverted(objs[i], out, desiredAPIVersion);
      if (why) throw internalError(`conversion webhook for ${gvk} returned invalid object: ${why}`);
      return withMetadataOf(objs[i], out);
    });
  }
}

/**
 * Records on a CRD being written which ConversionReview spelling its webhook is sent: each
 * write of the CRD itself (not of its status) decides anew, by the group name it used.
 * Mutates `crd`.
 */
export function recordReviewGroup(crd: KubeObject, ctx: StrategyContext): void {
  if (ctx.subresource) return;
  const meta = crd.metadata ??= {};
  if (ctx.kubeSpelling) {
    meta.annotations = {
      ...meta.annotations,
      [REVIEW_GROUP_ANNOTATION]: KUBE_CONVERSION_REVIEW_GROUP,
    };
  } else if (meta.annotations?.[REVIEW_GROUP_ANNOTATION] !== undefined) {
    meta.annotations = { ...meta.annotations };
    delete meta.annotations[REVIEW_GROUP_ANNOTATION];
    if (!Object.keys(meta.annotations).length) delete meta.annotations;
  }
}

/** The converted objects of an answer, or an Error saying what is wrong with it. */
function convertedObjects(answer: unknown, version: string, uid: string): KubeObject[] {
  const review = (answer ?? {}) as KubeObject;
  const response = review.response;
  if (version === "v1") {
    const groups = [CONVERSION_REVIEW_GROUP, KUBE_CONVERSION_REVIEW_GROUP].map((g) => `${g}/v1`);
    if (review.kind !== "ConversionReview" || !groups.includes(review.apiVersion)) {
      throw new Error(
        `expected webhook response of ${CONVERSION_REVIEW_GROUP}/v1, Kind=ConversionReview, got ${
          review.apiVersion ?? ""
        }, Kind=${review.kind ?? ""}`,
      );
    }
  }
  if (!response || typeof response !== "object") throw new Error("no response provided");
  // v1beta1 answers were never checked for their uid (kube keeps that).
  if (version === "v1" && response.uid !== uid) {
    throw new Error(`expected response.uid="${uid}", got "${response.uid ?? ""}"`);
  }
  const result = response.result ?? {};
  if (result.status !== "Success") {
    if (typeof result.message === "string" && result.message) throw new Error(result.message);
    throw new Error(`response.result.status was '${result.status ?? ""}', not 'Success'`);
  }
  const objs = response.convertedObjects;
  return Array.isArray(objs) ? objs : [];
}

/** Why a converted object is not acceptable, or undefined. */
function checkConverted(
  input: KubeObject,
  out: KubeObject,
  desired: string,
): string | undefined {
  if (!out || typeof out !== "object" || Array.isArray(out)) return "not an object";
  if (out.apiVersion !== desired) {
    return `invalid apiVersion "${out.apiVersion ?? ""}", expected "${desired}"`;
  }
  if (out.kind !== input.kind) {
    return `invalid kind "${out.kind ?? ""}", expected "${input.kind ?? ""}"`;
  }
  const meta = out.metadata;
  if (meta !== undefined && (typeof meta !== "object" || meta === null || Array.isArray(meta))) {
    return "invalid metadata";
  }
  return undefined;
}

/** The converted object with the input's metadata, except labels and annotations, which the
 * webhook may change (kube's rule). */
function withMetadataOf(input: KubeObject, out: KubeObject): KubeObject {
  const metadata = { ...(input.metadata ?? {}) };
  for (const k of ["labels", "annotations"]) {
    const v = out.metadata?.[k];
    if (v && typeof v === "object" && !Array.isArray(v)) metadata[k] = v;
    else delete metadata[k];
  }
  return { ...out, metadata };
}

/** The webhook as the admission client calls it: only where, and for how long, matter. */
function callTarget(crd: string, c: KubeObject): Webhook {
  const caBundle = typeof c.caBundle === "string" && c.caBundle
    ? new TextDecoder().decode(Uint8Array.from(atob(c.caBundle), (ch) => ch.charCodeAt(0)))
    : "";
  let url: string;
  let serverName: string;
  if (typeof c.url === "string") {
    url = c.url;
    serverName = URL.canParse(url) ? new URL(url).hostname : "";
  } else {
    const s = c.service ?? {};
    serverName = `${s.name}.${s.namespace}.svc`;
    url = `https://${serverName}:${s.port ?? 443}${typeof s.path === "string" ? s.path : ""}`;
  }
  const none = new Error("not an admission webhook");
  return {
    type: "validating",
    name: crd,
    configuration: crd,
    clientConfig: { url, caBundle, serverName },
    rules: [],
    failurePolicy: "Fail",
    matchPolicy: "Exact",
    namespaceSelector: none,
    objectSelector: none,
    sideEffects: "None",
    timeoutMs: CONVERSION_TIMEOUT_MS,
    reinvocationPolicy: "Never",
    matchConditions: [],
    reviewGroup: CONVERSION_REVIEW_GROUP,
  };
}
