/**
 * A resource is data: one {@link ResourceDefinition} per served group/version/resource. The
 * generic registry turns a definition into get/list/create/update/delete; routes, discovery
 * and OpenAPI are derived from it. Behaviour a schema cannot express lives in the optional
 * {@link Strategy} hooks.
 */

import type { FieldError, KubeObject, PrinterColumn, Verb } from "../api/mod.ts";
import type {
  Attributes,
  Authenticator,
  Authorizer,
  ServiceAccountTokens,
  TokenReviewer,
} from "../auth/mod.ts";

export { ALL_VERBS, type KubeObject, type PrinterColumn, type Verb } from "../api/mod.ts";

/** Context passed to strategy hooks. */
export interface StrategyContext {
  /** The authenticated user making the request. */
  user: { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> };
  subresource?: string;
  /** Whether the user may do something else too (see `RequestContext.authorize`). Absent:
   * allowed. */
  authorize?: (attributes: Omit<Attributes, "user">) => Promise<boolean>;
  /** The request's `Warning` list: admission appends to it, so that warnings reach the client
   * also with an error. Absent (the server's own writes): they come back in the result. */
  warnings?: string[];
  /** The request named the resource under Kubernetes' group name (`…k8s.io`). */
  kubeSpelling?: boolean;
  /** The request's audit annotations, when it is audited: admission writes into it. */
  auditAnnotations?: Record<string, string>;
}

/**
 * Hooks a resource may provide. Each says when it runs and whether it may mutate its input.
 * All are optional; the generic registry already handles metadata, schema validation,
 * generation and finalizers.
 */
export interface Strategy {
  /** Before validation on create; may mutate `obj` (e.g. clear status, set defaults). */
  prepareForCreate?(obj: KubeObject, ctx: StrategyContext): void;
  /** Fills in the kind's defaults, in place (a CRD's schema defaults). The registry calls it
   * on every object it reads from the store (gets, lists, watches, the stored object a write
   * starts from; after any storage conversion), on what a create or update is about to store
   * (after prepareForCreate / prepareForUpdate), and again once mutating admission changed
   * the object. */
  applyDefaults?(obj: KubeObject): void;
  /** Before validation on update; may mutate `obj`. On a subresource (`ctx.subresource`),
   * `obj` is the stored object with the subresource's part (status) taken from the request,
   * for the hook to narrow further. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): void;
  /** Extra validation on create, after schema validation. Must not mutate. */
  validateCreate?(obj: KubeObject, ctx: StrategyContext): FieldError[] | Promise<FieldError[]>;
  /** Extra validation on update, after schema validation. Must not mutate. */
  validateUpdate?(
    obj: KubeObject,
    old: KubeObject,
    ctx: StrategyContext,
  ): FieldError[] | Promise<FieldError[]>;
  /**
   * After validation, just before a create is stored: reserves what the object needs from
   * shared pools (a Service's cluster IPs and node ports) and fills it in. The reservation is
   * committed once the object is stored and reverted when it is not. A dry run checks without
   * reserving. Throws StatusErrors.
   */
  beginCreate?(obj: KubeObject, ctx: StrategyContext, opts: { dryRun: boolean }): Promise<
    Reservation | undefined
  >;
  /** As {@link beginCreate}, for an update of the main resource (not of a subresource). */
  beginUpdate?(
    obj: KubeObject,
    old: KubeObject,
    ctx: StrategyContext,
    opts: { dryRun: boolean },
  ): Promise<Reservation | undefined>;
  /** After an object has left the store (deleted, or its last finalizer removed): releases
   * what it held. Must not throw. */
  afterDelete?(obj: KubeObject): Promise<void>;
  /** Called when a delete is requested; may mutate `obj` (e.g. set phase Terminating). */
  prepareForDelete?(obj: KubeObject): void;
  /** True while resource-specific finalizers (beyond metadata.finalizers) hold the object,
   * e.g. a namespace's `spec.finalizers`. */
  finalizersPending?(obj: KubeObject): boolean;
  /** Which top-level fields count as "spec" for `metadata.generation` (default: all but
   * metadata and status). */
  specFields?: string[];
}

/** Where a Scale's fields live in an object: simple JSON paths such as `.spec.replicas`. */
export interface ScalePaths {
  /** Under `.spec`: what `spec.replicas` of the Scale reads and writes. */
  specReplicasPath: string;
  /** Under `.status`: `status.replicas` of the Scale (0 when absent). */
  statusReplicasPath: string;
  /** Under `.spec` or `.status`: a label selector in its string form (`status.selector`). */
  labelSelectorPath?: string;
}

/** What a {@link Strategy.beginCreate} or {@link Strategy.beginUpdate} reserved. */
export interface Reservation {
  /** The write is stored: keep the new reservations, let go of what the object gave up. */
  commit(): Promise<void>;
  /** The write did not happen: give back what was reserved. */
  revert(): Promise<void>;
}

/** What computed resources ({@link ResourceDefinition.review}) answer from. */
export interface ReviewServices {
  authorizer: Authorizer;
  authenticator: Authenticator;
  /** TokenReview: a token checked against audiences (default: the API server's). */
  reviewToken: TokenReviewer;
  serviceAccountTokens?: ServiceAccountTokens;
}

/** Context of a {@link ResourceDefinition.review} call. */
export interface ReviewContext extends StrategyContext {
  /** The namespace of the request path (`""` for cluster-scoped paths). */
  namespace: string;
  services: ReviewServices;
  /** For a computed subresource: the object it hangs off (e.g. the service account). */
  parent?: KubeObject;
}

/** How a served version maps to the shared stored form (e.g. events.platform.io/v1 stored as
 * core v1 events). Both functions return new objects. */
export interface StorageConversion {
  toStorage(obj: KubeObject): KubeObject;
  fromStorage(obj: KubeObject): KubeObject;
}

/**
 * A conversion that calls out (a CustomResourceDefinition's conversion webhook): async, and
 * whole batches at a time, so that a list or a page is converted in one call. The registry
 * converts what it reads from the store before it decodes it (one call per store read: a
 * get, a list page, a watch event), and what it writes before it stores it. Failures are
 * StatusErrors (kube: 500 InternalError); nothing is stored then.
 */
export interface BatchStorageConversion {
  /** Stored objects -> this definition's version, all in one call; the same order. */
  fromStorageAll(objs: KubeObject[]): Promise<KubeObject[]>;
  /** An object of this definition's version -> the stored form. */
  toStorageAsync(obj: KubeObject): Promise<KubeObject>;
  /** Objects of this definition's version -> `apiVersion` (another version of the same
   * resource), all in one call; the same order. For managed fields recorded at other
   * versions, whose shape may differ. */
  toVersionAll?(objs: KubeObject[], apiVersion: string): Promise<KubeObject[]>;
}

/** Whether `c` is a {@link BatchStorageConversion}. */
export function isBatchConversion(
  c: StorageConversion | BatchStorageConversion,
): c is BatchStorageConversion {
  return "fromStorageAll" in c;
}

export interface ResourceDefinition {
  /** `""` for the core group. */
  group: string;
  version: string;
  kind: string;
  /** The resource name in URLs, e.g. `configmaps`. */
  plural: string;
  singular: string;
  namespaced: boolean;
  /** The kind of lists of this resource. @default `${kind}List` */
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
  verbs: Verb[];
  /** Subresources served with get/update/patch, e.g. `["status"]`. */
  subresources?: string[];
  /** Name of the kind's schema in the group's schema document (`components.schemas`). */
  schema: string;
  /** How `metadata.name` is validated (default: a DNS-1123 subdomain). */
  nameValidation?: "dns1123Subdomain" | "dns1123Label" | "dns1035Label" | "pathSegment";
  /** DELETE answers with the deleted object instead of a Status (as kube does for
   * serviceaccounts). */
  deleteReturnsObject?: boolean;
  /** Field selectors beyond metadata.name and metadata.namespace: field path -> value. */
  fieldSelectors?: Record<string, (obj: KubeObject) => string | undefined>;
  printerColumns?: PrinterColumn[];
  /** The `scale` subresource (list it in `subresources` too): an autoscaling/v1 Scale mapped
   * onto these paths of the object (scale.ts). */
  scale?: ScalePaths;
  strategy?: Strategy;
  /**
   * The kind's empty object as Kubernetes builds it to track a create's managed fields: its
   * non-optional structs are there, empty (`{spec: {}}`), so a create does not own them as
   * containers (`"."`), only what it sets in them. Default `{}`.
   */
  emptyObject?: KubeObject;
  /** Set when this version is deprecated: the `Warning` every request on it gets. */
  deprecationWarning?: string;
  /** A beta version served unless `--runtime-config` turns it off, as kube serves a few
   * (its "legacy beta enabled by default" resources); other beta versions are off by default. */
  betaOnByDefault?: boolean;
  /** Defined by a CustomResourceDefinition: no strategic merge patch, no protobuf. */
  customResource?: boolean;
  /**
   * A computed resource: create-only, stores nothing (access reviews, token requests). The
   * body is decoded and validated as a create's, then this returns the object to answer with.
   */
  review?: (obj: KubeObject, ctx: ReviewContext) => Promise<KubeObject>;
  /**
   * Subresources answered by POST with a computed object of another kind, e.g.
   * `serviceaccounts/token` (a TokenRequest): subresource name -> the definition of that kind
   * (with `review`).
   */
  computedSubresources?: Record<string, ResourceDefinition>;
  /** Where objects live in the store, when shared with another definition. */
  storage?: {
    group: string;
    resource: string;
    conversion: StorageConversion | BatchStorageConversion;
  };
  /**
   * True for an apiVersion of this resource that is no longer served (a CRD version turned
   * off): managed fields recorded at it are dropped on the object's next write (kube's
   * obsolete versions). Absent: none.
   */
  obsoleteVersion?: (apiVersion: string) => boolean;
}

/** The kind of a list of `def`'s objects: `listKind`, else `<kind>List`. */
export function listKindOf(def: { kind: string; listKind?: string }): string {
  return def.listKind || `${def.kind}List`;
}

/** `v1` for the core group, `group/version` otherwise. */
export function apiVersionOf(def: { group: string; version: string }): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
