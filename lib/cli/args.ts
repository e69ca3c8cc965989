/**
 * The flags of one `platform storage` subcommand: `--name value`, `--name=value`, and
 * booleans (`--force`, `--force=false`). An unknown flag, a missing value or a stray argument
 * is a {@link UsageError}, which the command reports in one line with exit status 2.
 * @module
 */

/** Bad input to a command: reported as one line, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** One flag of a subcommand. */
export interface CommandFlag {
  name: string;
  /** `bool` takes no value (or `=true|false`). */
  kind: "string" | "bool";
  /** The value as shown in help, e.g. `FILE`. */
  value?: string;
  help: string;
}

/** The flags given, by name; `--help` sets `help`. */
export type ParsedFlags = Map<string, string | boolean>;

/** Parses `args` against `flags`. */
export function parseFlags(args: string[], flags: readonly CommandFlag[]): ParsedFlags {
  const byName = new Map(flags.map((f) => [f.name, f]));
  const out: ParsedFlags = new Map();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--help" || arg === "-h") {
      out.set("help", true);
      continue;
    }
    const m = /^--?([a-z0-9-]+)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
    const [, name, inline] = m;
    const flag = byName.get(name);
    if (!flag) throw new UsageError(`unknown flag --${name}`);
    if (out.has(name)) throw new UsageError(`--${name} is given twice`);
    if (flag.kind === "bool") {
      if (inline === undefined || inline === "true") out.set(name, true);
      else if (inline === "false") out.set(name, false);
      else throw new UsageError(`--${name}: expected true or false, got ${JSON.stringify(inline)}`);
      continue;
    }
    const value = inline ?? args[++i];
    if (value === undefined || (inline === undefined && value.startsWith("--"))) {
      throw new UsageError(`--${name} needs a value`);
    }
    if (value === "") throw new UsageError(`--${name} needs a value`);
    out.set(name, value);
  }
  return out;
}

/** The string value of `--name`, or a UsageError saying it is required. */
export function required(flags: ParsedFlags, name: string): string {
  const v = flags.get(name);
  if (typeof v !== "string") throw new UsageError(`--${name} is required`);
  return v;
}

/** The string value of `--name`, if given. */
export function optional(flags: ParsedFlags, name: string): string | undefined {
  const v = flags.get(name);
  return typeof v === "string" ? v : undefined;
}

/** Help text: a usage line, a description and the flags. */
export function helpText(usage: string, about: string, flags: readonly CommandFlag[]): string {
  const left = flags.map((f) => `  --${f.name}${f.value ? ` ${f.value}` : ""}`);
  const width = Math.max(...left.map((l) => l.length)) + 2;
  const lines = flags.map((f, i) => left[i].padEnd(width) + f.help);
  return `Usage:\n  ${usage}\n\n${about}\n\nFlags:\n${lines.join("\n")}\n`;
}
