/**
 * `platform storage <copy|snapshot|restore> [flags]`: the subcommands that move a server's
 * objects between stores, back up a running server and restore a data directory. Bad input
 * and refusals are one line and exit status 2; a failure on the way (etcd or the server not
 * answering, a stream cut off) is one line and exit status 1.
 * @module
 */

import { ConfigError } from "../config/mod.ts";
import { EtcdUnavailableError, JournalCorruptError } from "../storage/mod.ts";
import { type CommandFlag, helpText, type ParsedFlags, parseFlags, UsageError } from "./args.ts";
import { COPY_FLAGS, runCopy } from "./copy.ts";
import {
  CommandFailedError,
  RESTORE_FLAGS,
  runRestore,
  runSnapshot,
  SNAPSHOT_FLAGS,
} from "./snapshot.ts";

interface Subcommand {
  usage: string;
  about: string;
  flags: readonly CommandFlag[];
  run(flags: ParsedFlags, out: (line: string) => void): Promise<void>;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  copy: {
    usage: "platform storage copy --from DIR|etcd://HOST:PORT/PREFIX --to DIR|etcd://…",
    about: "Copies every object of a stopped server into an empty data directory or etcd " +
      "prefix.\nObjects, not history: resourceVersions change. Certificates and tokens " +
      "(<data-dir>/pki) are not copied.",
    flags: COPY_FLAGS,
    run: runCopy,
  },
  snapshot: {
    usage: "platform storage snapshot [--kubeconfig FILE] [--output FILE]",
    about: "Takes a consistent snapshot of a running server's store at one revision, without " +
      "stopping writes,\nthrough its authenticated endpoint GET /storage/snapshot.",
    flags: SNAPSHOT_FLAGS,
    run: runSnapshot,
  },
  restore: {
    usage: "platform storage restore --snapshot FILE --data-dir DIR [--force]",
    about: "Brings a data directory's store back to a snapshot (checked whole first). Refuses " +
      "a data directory\nthat holds a store unless --force, and always one a server runs on.",
    flags: RESTORE_FLAGS,
    run: runRestore,
  },
};

const USAGE = `Usage:
  platform storage copy      copy every object of a stopped server to another store
  platform storage snapshot  snapshot a running server's store into a file
  platform storage restore   restore a data directory from a snapshot file

"platform storage <command> --help" describes each.
`;

/** Runs `platform storage …`; resolves to the exit status. */
export async function runStorageCommand(args: string[]): Promise<number> {
  const name = args[0];
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    if (name === undefined) {
      console.error(USAGE);
      return 2;
    }
    console.log(USAGE);
    return 0;
  }
  const command = SUBCOMMANDS[name];
  if (!command) {
    console.error(`platform: storage: unknown command "${name}" (copy, snapshot or restore)`);
    return 2;
  }
  const fail = (message: string) => console.error(`platform: storage ${name}: ${message}`);
  try {
    const flags = parseFlags(args.slice(1), command.flags);
    if (flags.get("help")) {
      console.log(helpText(command.usage, command.about, command.flags));
      return 0;
    }
    await command.run(flags, (line) => console.log(line));
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      fail(err.message);
      return 2;
    }
    if (
      err instanceof CommandFailedError || err instanceof EtcdUnavailableError ||
      err instanceof JournalCorruptError || isOsError(err)
    ) {
      fail((err as Error).message);
      return 1;
    }
    throw err;
  }
}

function isOsError(err: unknown): boolean {
  return Object.values(Deno.errors).some((E) => err instanceof E);
}
