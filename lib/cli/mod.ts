/**
 * The `platform storage` commands (copy, snapshot, restore): {@link runStorageCommand} takes
 * the arguments after `storage` and resolves to the exit status. `platform check-config
 * FILE…`: {@link runCheckConfig} validates configuration files of every kind.
 * @module
 */

export { runStorageCommand } from "./storage_command.ts";
export { isCheckConfigFiles, runCheckConfig } from "./check_config.ts";
