/**
 * The `platform storage` commands (copy, snapshot, restore): {@link runStorageCommand} takes
 * the arguments after `storage` and resolves to the exit status.
 * @module
 */

export { runStorageCommand } from "./storage_command.ts";
