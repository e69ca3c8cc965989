/**
 * API errors. Every failure that leaves the server is a {@link StatusError}, turned into a
 * `Status` object by the one error exit of the HTTP layer. Reasons, codes and message
 * formats follow Kubernetes so that clients (kubectl, client libraries) recognise them.
 */

/** A qualified resource, e.g. `{group: "", resource: "configmaps"}`. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** One offending field of an Invalid error (`details.causes[]`). */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The wire shape of a `Status` object. */
export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, unknown>;
  status: "Failure" | "Success";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Expired"
  | "Invalid"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "UnsupportedMediaType"
  | "RequestEntityTooLarge"
  | "TooManyRequests"
  | "Timeout"
  | "InternalError"
  /** kube's StatusReasonStoreReadError: a stored object could not be read (500). */
  | "StorageReadError"
  | "ServiceUnavailable";

/** An API error: HTTP code, kube reason, message and optional details. */
export class StatusError extends Error {
  readonly code: number;
  readonly reason: StatusReason;
  readonly details?: StatusDetails;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Record<string, string>;
  /** List metadata of the Status (an expired list hands back a `continue` token here). */
  readonly listMeta?: { continue?: string };

  constructor(
    code: number,
    reason: StatusReason,
    message: string,
    options: {
      details?: StatusDetails;
      headers?: Record<string, string>;
      listMeta?: { continue?: string };
    } = {},
  ) {
    super(message);
    this.name = "StatusError";
    this.code = code;
    this.reason = reason;
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.listMeta = options.listMeta;
  }

  toStatus(): Status {
    const status: Status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: { ...this.listMeta },
      status: "Failure",
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** `configmaps` or `certificatesigningrequests.certificates.platform.io`. */
export function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function details(gr: GroupResource, name: string): StatusDetails {
  const d: StatusDetails = { name, kind: gr.resource };
  if (gr.group) d.group = gr.group;
  return d;
}

export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError(404, "NotFound", `${qualified(gr)} "${name}" not found`, {
    details: details(gr, name),
  });
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(409, "AlreadyExists", `${qualified(gr)} "${name}" already exists`, {
    details: details(gr, name),
  });
}

export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  return new StatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`,
    { details: details(gr, name) },
  );
}

/** The message kube gives when a PUT or precondition carries a stale resourceVersion. */
export const OBJECT_MODIFIED =
  "the object has been modified; please apply your changes to the latest version and try again";

export function forbidden(
  gr: GroupResource,
  name: string,
  why: string,
  causes?: StatusCause[],
): StatusError {
  const subject = name ? `${qualified(gr)} "${name}"` : qualified(gr);
  const d = details(gr, name);
  if (causes) d.causes = causes;
  return new StatusError(403, "Forbidden", `${subject} is forbidden: ${why}`, { details: d });
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, "BadRequest", message);
}

export function unauthorized(): StatusError {
  return new StatusError(401, "Unauthorized", "Unauthorized");
}

export function methodNotAllowed(): StatusError {
  return new StatusError(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
  );
}

export function notAcceptable(supported: string[]): StatusError {
  return new StatusError(
    406,
    "NotAcceptable",
    `only the following media types are accepted: ${supported.join(", ")}`,
  );
}

export function unsupportedMediaType(contentType: string, supported: string[]): StatusError {
  return new StatusError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${
      supported.join(", ")
    }`,
    { details: contentType ? { causes: [{ message: contentType }] } : undefined },
  );
}

export function entityTooLarge(limit: number): StatusError {
  return new StatusError(
    413,
    "RequestEntityTooLarge",
    `Request entity too large: limit is ${limit}`,
  );
}

export function gone(message: string): StatusError {
  return new StatusError(410, "Gone", message);
}

export function expired(message: string): StatusError {
  return new StatusError(410, "Expired", message);
}

export function timeout(message: string, retryAfterSeconds?: number): StatusError {
  const headers: Record<string, string> = {};
  let d: StatusDetails | undefined;
  if (retryAfterSeconds !== undefined) {
    headers["Retry-After"] = String(retryAfterSeconds);
    d = { retryAfterSeconds };
  }
  return new StatusError(504, "Timeout", message, { details: d, headers });
}

export function tooManyRequests(message: string, retryAfterSeconds: number): StatusError {
  return new StatusError(429, "TooManyRequests", message, {
    details: { retryAfterSeconds },
    headers: { "Retry-After": String(retryAfterSeconds) },
  });
}

export function internalError(message: string): StatusError {
  return new StatusError(500, "InternalError", `Internal error occurred: ${message}`, {
    details: { causes: [{ message }] },
  });
}

export function serviceUnavailable(message: string): StatusError {
  return new StatusError(503, "ServiceUnavailable", message);
}

// ---- field errors (Invalid, 422) ----

/** Kubernetes' field error types: the cause `reason` and the text in the message. */
export const FieldErrorType = {
  NotFound: { reason: "FieldValueNotFound", text: "Not found" },
  Required: { reason: "FieldValueRequired", text: "Required value" },
  Duplicate: { reason: "FieldValueDuplicate", text: "Duplicate value" },
  Invalid: { reason: "FieldValueInvalid", text: "Invalid value" },
  NotSupported: { reason: "FieldValueNotSupported", text: "Unsupported value" },
  Forbidden: { reason: "FieldValueForbidden", text: "Forbidden" },
  TooLong: { reason: "FieldValueTooLong", text: "Too long" },
  TooMany: { reason: "FieldValueTooMany", text: "Too many" },
  TypeInvalid: { reason: "FieldValueTypeInvalid", text: "Invalid value" },
} as const;

export type FieldErrorKind = keyof typeof FieldErrorType;

/** One validation failure at a field path such as `metadata.labels`. */
export interface FieldError {
  type: FieldErrorKind;
  field: string;
  /** The offending value; omitted for Required, Forbidden, TooLong, TooMany. */
  value?: unknown;
  detail?: string;
}

function formatValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Formats the text after `field: ` the way kube's field.Error does. */
export function fieldErrorBody(e: FieldError): string {
  const t = FieldErrorType[e.type];
  const parts: string[] = [t.text];
  const showValue = e.value !== undefined &&
    !(e.type === "Required" || e.type === "Forbidden" || e.type === "TooLong" ||
      e.type === "TooMany");
  if (showValue) parts.push(formatValue(e.value));
  if (e.detail) parts.push(e.detail);
  return parts.join(": ");
}

export function fieldErrorMessage(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/**
 * 422 Invalid, listing every field error:
 * `ConfigMap "x" is invalid: [data: Invalid value: …, metadata.name: Required value]`.
 */
export function invalid(
  kind: string,
  group: string,
  name: string,
  errors: FieldError[],
): StatusError {
  const messages = errors.map(fieldErrorMessage);
  const joined = messages.length === 1 ? messages[0] : `[${messages.join(", ")}]`;
  const d: StatusDetails = {
    name,
    kind,
    causes: errors.map((e) => ({
      reason: FieldErrorType[e.type].reason,
      message: fieldErrorBody(e),
      field: e.field,
    })),
  };
  if (group) d.group = group;
  return new StatusError(
    422,
    "Invalid",
    `${group ? `${kind}.${group}` : kind} ${JSON.stringify(name)} is invalid: ${joined}`,
    {
      details: d,
    },
  );
}

/** Anything thrown that is not a StatusError becomes a 500 that hides no detail from logs. */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return internalError(message);
}
