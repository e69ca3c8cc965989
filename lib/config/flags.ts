/**
 * Command-line flags of `platform serve`: the argv tokenizer and the `--help` flag list. The
 * flag table is in `flag_table.ts`, the value parsers shared by flags and the configuration
 * file in `value_parsers.ts`, and `ConfigError` in `config_error.ts`; other folders reach all of
 * them through `mod.ts`.
 *
 * Nothing here reads files or knows the configuration file's schema; `server_config.ts`
 * joins flags, file and defaults into one `ServerConfig`.
 *
 * @module
 */

import { ConfigError } from "./config_error.ts";
import { type DeprecatedAlias, FLAGS, type FlagSpec } from "./flag_table.ts";

const FLAGS_BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(
  FLAGS.flatMap((f) =>
    [f.name, ...(f.aliases ?? []), ...(f.deprecatedAliases ?? []).map((d) => d.name)]
      .map((name) => [name, f])
  ),
);

const DEPRECATED_BY_NAME: ReadonlyMap<string, DeprecatedAlias> = new Map(
  FLAGS.flatMap((f) => (f.deprecatedAliases ?? []).map((d) => [d.name, d])),
);

/** Flags as given on the command line, before their values are parsed. */
export interface ParsedArgs {
  /** `--help` or `-h` was given. */
  help: boolean;
  /** Raw values per flag name, in command-line order (one entry per occurrence). */
  values: Map<string, string[]>;
  /** One warning line per deprecated name used, in kube's words (see {@link DeprecatedAlias}). */
  warnings: string[];
}

/**
 * Split argv into flags. Accepts `--name=value` and `--name value`; repeated flags keep every
 * occurrence (the caller decides whether the last wins or they add up).
 *
 * @throws {ConfigError} on an unknown flag, a missing value or a positional argument.
 * @example
 * ```ts
 * tokenizeArgs(["--secure-port=0", "--tls-san", "a,b"]).values.get("tls-san"); // ["a,b"]
 * ```
 */
export function tokenizeArgs(argv: readonly string[]): ParsedArgs {
  const values = new Map<string, string[]>();
  const deprecatedUsed = new Set<DeprecatedAlias>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help" || arg === "-help") {
      help = true;
      continue;
    }
    if (!arg.startsWith("-") || arg === "-" || arg === "--") {
      throw new ConfigError(`unexpected argument ${JSON.stringify(arg)}: serve takes only flags`);
    }
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq === -1 ? body : body.slice(0, eq);
    const spec = FLAGS_BY_NAME.get(name);
    if (!spec) {
      throw new ConfigError(`unknown flag ${JSON.stringify(`--${name}`)} (see --help)`);
    }
    let value: string;
    if (eq !== -1) {
      value = body.slice(eq + 1);
    } else if (spec.kind === "bool") {
      value = "true"; // a bare boolean flag turns it on, as with kube's flags
    } else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("--") && next.length > 2)) {
        throw new ConfigError(`--${name}: missing value`);
      }
      value = next;
      i++;
    }
    const deprecated = DEPRECATED_BY_NAME.get(name);
    if (deprecated) deprecatedUsed.add(deprecated);
    // An alias's values count as the flag's own.
    const list = values.get(spec.name) ?? [];
    list.push(value);
    values.set(spec.name, list);
  }
  const warnings = [...deprecatedUsed].map((d) =>
    `Flag --${d.name} has been deprecated, ${d.message}`
  );
  return { help, values, warnings };
}

/**
 * The warnings for the deprecated flag names in `argv`, one line each, in kube's words
 * (`Flag --audit-webhook-batch-initial-backoff has been deprecated, …`). For argv that
 * {@link tokenizeArgs} accepts; the caller logs them once it has a logger.
 */
export function deprecatedFlagWarnings(argv: readonly string[]): string[] {
  return tokenizeArgs(argv).warnings;
}

/**
 * The flag list of `--help`: one line per flag with its default, then the known feature gates
 * (passed in so that this module does not depend on the gate table). No usage header: the
 * command line adds its own.
 */
export function formatFlagHelp(gateLines: readonly string[] = []): string {
  const rows = FLAGS.map((f) => ({
    left: `  --${f.name} ${valueName(f)}`,
    // The default stays on one line.
    words: [
      ...f.help.split(" "),
      ...(f.aliases ?? []).map((a) => `Also --${a}.`).join(" ").split(" ").filter((w) => w),
      ...(f.deprecatedAliases ?? []).flatMap((d) =>
        `Also --${d.name}, deprecated since ${d.since}: ${d.message}`.split(" ")
      ),
      `(default: ${f.defaultText ?? "none"})`,
    ],
  }));
  rows.push({ left: "  -h, --help", words: "Show this help and exit.".split(" ") });
  // Flags longer than the column put their text on the next line.
  const width = Math.min(Math.max(...rows.map((r) => r.left.length)) + 2, HELP_COLUMN);
  const lines = rows.flatMap((r) => {
    const text = wrap(r.words, HELP_WIDTH - width).map((t) => " ".repeat(width) + t);
    if (r.left.length + 2 > width) return [r.left, ...text];
    text[0] = r.left.padEnd(width) + text[0].slice(width);
    return text;
  });
  if (gateLines.length > 0) lines.push("", "Feature gates (--feature-gates):", ...gateLines);
  return lines.join("\n") + "\n";
}

const HELP_WIDTH = 100;
/** Where help text starts: longer flags get their own line. */
const HELP_COLUMN = 40;

/** Join words into lines of at most `width` characters (a longer word gets its own line). */
function wrap(words: readonly string[], width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of words) {
    if (line !== "" && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  out.push(line);
  return out;
}

function valueName(f: FlagSpec): string {
  switch (f.kind) {
    case "list":
      return "strings";
    case "map":
      return "key=value,...";
    case "port":
      return "int";
    case "bytes":
    case "int":
      return "int";
    case "enum":
      return f.values!.join("|");
    default:
      return f.kind;
  }
}
