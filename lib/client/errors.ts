/**
 * The client's errors and how kubectl prints them: a problem of the command line or of a file
 * is `error: <message>`; a Status from the server is `Error from server (<Reason>): <message>`,
 * `The <Kind> "<name>" is invalid: <field>: <message>` for an invalid object, or
 * `error: You must be logged in to the server (<message>)` for a 401.
 *
 * @module
 */

/** A problem the client found (bad flags, files, configuration): printed `error: <message>`. */
export class CommandError extends Error {
  override name = "CommandError";
}

/** A Status the server answered with; `message` is the text kubectl prints, whole. */
export class ServerError extends Error {
  override name = "ServerError";
  constructor(readonly printed: string, readonly code: number) {
    super(printed);
  }
}

interface Status {
  kind?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    kind?: string;
    name?: string;
    causes?: { field?: string; message?: string }[];
  };
}

/** The kubectl message for a response that is not a success. */
export async function serverError(res: Response): Promise<ServerError> {
  const text = await res.text();
  let status: Status | undefined;
  try {
    const parsed = JSON.parse(text);
    if (parsed && parsed.kind === "Status") status = parsed;
  } catch { /* not JSON */ }
  if (!status) {
    const body = text.trim() || res.statusText || `status ${res.status}`;
    return new ServerError(`Error from server: ${body}`, res.status);
  }
  return new ServerError(statusMessage(status), res.status);
}

/** The text kubectl prints for a Status. */
export function statusMessage(status: Status): string {
  const message = status.message ?? "";
  if (status.reason === "Unauthorized") {
    return `error: You must be logged in to the server (${message})`;
  }
  if (status.reason === "Invalid") {
    const d = status.details;
    const what = d && (d.kind || d.name)
      ? `The ${d.kind ?? ""} "${d.name ?? ""}" is invalid`
      : "The request is invalid";
    const causes = (d?.causes ?? []).map((c) => c.field ? `${c.field}: ${c.message}` : c.message);
    if (causes.length === 1) return `${what}: ${causes[0]}`;
    if (causes.length > 1) return `${what}: \n${causes.map((c) => `* ${c}`).join("\n")}`;
    return `${what}: ${message}`;
  }
  if (status.reason) return `Error from server (${status.reason}): ${message}`;
  return `Error from server: ${message}`;
}
