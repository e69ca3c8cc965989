/** The public surface of lib/api/ (lib/README.md). */
export {
  alreadyExists,
  badRequest,
  conflict,
  entityTooLarge,
  expired,
  type FieldError,
  fieldErrorMessage,
  forbidden,
  type GroupResource,
  internalError,
  invalid,
  methodNotAllowed,
  notAcceptable,
  notFound,
  OBJECT_MODIFIED,
  type Status,
  type StatusCause,
  StatusError,
  type StatusReason,
  timeout,
  tooManyRequests,
  toStatusError,
  unauthorized,
  unsupportedMediaType,
} from "./errors.ts";
export {
  canonicalGroup,
  isBuiltinGroup,
  kubeGroup,
  kubeSpelled,
  toKubeApiVersion,
  toPlatformApiVersion,
} from "./group_names.ts";
export {
  canonicalIP,
  cidrSize,
  formatCIDR,
  formatIP,
  formatIPv6Groups,
  type IP,
  type IPFamily,
  parseCIDR,
  parseIP,
} from "./ip.ts";
export { isJsonObject, jsonEqual } from "./json.ts";
export { createLogger, type Logger, silentLogger } from "./log.ts";
export { validateLabels, validateObjectMeta, validateObjectMetaUpdate } from "./meta_validation.ts";
export {
  byteLength,
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  generateName,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validatePathSegmentName,
} from "./names.ts";
export { jsonTooDeep, MAX_NESTING_DEPTH, valueTooDeep } from "./nesting.ts";
export { ALL_VERBS, type KubeObject, type PrinterColumn, type Verb } from "./object.ts";
export { decodePem, encodePem, type PemBlock } from "./pem.ts";
export {
  FieldSelector,
  type LabelSelector,
  labelSelectorFromObject,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseFieldSelectorSyntax,
  parseLabelSelector,
} from "./selectors.ts";
export {
  isWellKnownSigner,
  SIGNER_APISERVER_CLIENT,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
  SIGNER_NODEAGENT_SERVING,
  WELL_KNOWN_SIGNERS,
  type WellKnownSigner,
} from "./signer_names.ts";
export { type Clock, humanDuration, rfc3339, rfc3339Micro, systemClock } from "./time.ts";
export { ADMIN_GROUP, ADMIN_USER, type UserInfo } from "./user.ts";
