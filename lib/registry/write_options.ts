/**
 * What the registry's writes take besides their required arguments (namespace, name, body,
 * context), and what they give back. Each verb has its own options type, so an option a verb
 * does not have (`force` on an update, `subresource` on a create) does not type-check.
 */

import type { KubeObject, StrategyContext } from "./definition.ts";
import type { ObjectFilter } from "./filter.ts";
import type { PatchType } from "./patching.ts";

export type { PatchType };

export type FieldValidation = "Strict" | "Warn" | "Ignore";

/** What a body check may be told (writes and reviews). */
export interface DecodingOptions {
  /** Unknown and duplicate fields: 400 under Strict, warnings under Warn (the default),
   * dropped silently under Ignore. */
  fieldValidation?: FieldValidation;
  /** Keys the request body repeats (found in its text; see codec/json_duplicates.ts). */
  duplicateFields?: string[];
}

/** What every create, update and patch may be told. */
export interface WriteOptions extends DecodingOptions {
  /** Check everything, store nothing. */
  dryRun?: boolean;
  /** The field manager of this write (`fieldManager`, or inferred from the User-Agent).
   * Default: the server's own ("platform"). */
  manager?: string;
}

export type CreateOptions = WriteOptions;

export interface UpdateOptions extends WriteOptions {
  /** Write only the part of the object this subresource owns (`status`, …). */
  subresource?: string;
  /** Called before a PUT (or an apply) creates a missing object: it needs `create` permission
   * then, besides its own verb (authorization hooks in here). */
  beforeCreate?: () => Promise<void> | void;
}

export interface PatchOptions extends UpdateOptions {
  /** Apply only: take over the fields the configuration sets from the managers that own them
   * instead of failing with a conflict. */
  force?: boolean;
}

/** A PATCH request: its type and the decoded body. */
export interface PatchRequest {
  type: PatchType;
  body: unknown;
}

export type ReviewOptions = DecodingOptions;

export interface WriteResult {
  object: KubeObject;
  /** Warnings for the `Warning` response header (e.g. unknown fields under Warn). */
  warnings: string[];
}

/** An update's or a patch's result: `created` when it created a missing object. */
export interface UpsertResult extends WriteResult {
  created: boolean;
}

export interface DeleteOptions {
  dryRun?: boolean;
  /** Who deletes, as admission sees them. @default the server itself */
  context?: StrategyContext;
  /** The object must still have this uid / resourceVersion (409 otherwise). */
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteCollectionOptions {
  /** Which objects: all when absent. */
  filter?: ObjectFilter;
  dryRun?: boolean;
  /** Who deletes, as admission sees them. @default the server itself */
  context?: StrategyContext;
}

export interface DeleteResult {
  object: KubeObject;
  /** False while finalizers hold the object (it now has a deletionTimestamp). */
  deleted: boolean;
}
