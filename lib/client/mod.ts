/**
 * The public surface of lib/client/ (lib/README.md): the client of a platform (or Kubernetes)
 * API server. The authenticated fetch ({@link ClientConnection}), discovery of resource types,
 * and the `platform patch` command.
 *
 * @module
 */
export { ClientConnection, type ConnectionOptions } from "./connection.ts";
export { type ApiResource, Discovery, objectPath, UnknownTypeError } from "./discovery.ts";
export { CommandError, ServerError, serverError, statusMessage } from "./errors.ts";
export { ConnectionError, exchange, type TlsSettings } from "./transport.ts";
export { GLOBAL_FLAGS, parseRequestTimeout } from "./options.ts";
export { ALL_PATCH_FLAGS, PATCH_FLAGS, patchHelp } from "./patch_flags.ts";
export { type CommandIO, runPatchCommand } from "./patch_command.ts";
export { patchLocally, type PatchType } from "./local_patch.ts";
