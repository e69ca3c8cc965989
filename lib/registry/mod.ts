/** The public surface of lib/registry/ (lib/README.md). */
export { Catalogue, groupsOf } from "./catalogue.ts";
export {
  ALL_VERBS,
  apiVersionOf,
  type BatchStorageConversion,
  isBatchConversion,
  type KubeObject,
  listKindOf,
  type PrinterColumn,
  type Reservation,
  type ResourceDefinition,
  type ReviewContext,
  type ReviewServices,
  type ScalePaths,
  type StorageConversion,
  type Strategy,
  type StrategyContext,
  type Verb,
} from "./definition.ts";
export { parseFilter } from "./filter.ts";
export {
  type DeleteOptions,
  type FieldValidation,
  type ListOptions,
  type PatchType,
  type RegistryWatch,
  resourcePrefix,
  ResourceRegistry,
  type WatchEvent,
} from "./generic.ts";
export { Informer } from "./informer.ts";
export {
  SCALE_API_VERSION,
  SCALE_KIND,
  SCALE_PATCH_TYPES,
  type ScaleChange,
  scaleOf,
} from "./scale.ts";
export { UNSAFE_DELETE_OPTION } from "./unsafe_delete.ts";
