/**
 * The command line of the client, parsed as kubectl (pflag) parses it: `--name=value`,
 * `--name value`, `-x value`, `-x=value`, `-xvalue`; booleans as `--name` or `--name=false`;
 * list flags repeated and, for `strings` flags, comma-separated; `--` ends the flags.
 * The flags are data ({@link FlagSpec}), so the same table parses and prints `--help`.
 *
 * @module
 */

import { CommandError } from "./errors.ts";

/** One flag of the client. */
export interface FlagSpec {
  name: string;
  short?: string;
  /** `strings`: repeatable and comma-separated; `array`: repeatable, taken whole. */
  kind: "string" | "bool" | "int" | "strings" | "array";
  /** The default as `--help` shows it. */
  default?: string;
  help: string;
  /** Accepted and ignored: the option does not apply to this client. */
  noop?: boolean;
  /** A bare boolean-like use (`--dry-run`) means this value. */
  bareValue?: string;
}

/** What a command line says. */
export interface ParsedFlags {
  /** Flags given, by long name: string for string/int, boolean for bool, string[] for lists. */
  values: Map<string, string | boolean | string[]>;
  positionals: string[];
}

/**
 * Parses `args` against `specs`.
 *
 * @throws {CommandError} `unknown flag: --x`, `flag needs an argument: --type`,
 * `invalid argument "x" for "--local" flag: ...`.
 */
export function parseFlags(args: string[], specs: FlagSpec[]): ParsedFlags {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short!, s]));
  const values = new Map<string, string | boolean | string[]>();
  const positionals: string[] = [];
  const set = (spec: FlagSpec, raw: string | undefined, shown: string) => {
    if (spec.kind === "bool") {
      if (raw === undefined || raw === "true") return values.set(spec.name, true);
      if (raw === "false") return values.set(spec.name, false);
      throw new CommandError(
        `invalid argument "${raw}" for "${shown}" flag: strconv.ParseBool: parsing "${raw}": ` +
          "invalid syntax",
      );
    }
    if (raw === undefined) throw new CommandError(`flag needs an argument: ${shown}`);
    if (spec.kind === "int" && !/^-?\d+$/.test(raw)) {
      throw new CommandError(
        `invalid argument "${raw}" for "${shown}" flag: strconv.ParseInt: parsing "${raw}": ` +
          "invalid syntax",
      );
    }
    if (spec.kind === "strings" || spec.kind === "array") {
      const prev = (values.get(spec.name) as string[] | undefined) ?? [];
      const added = spec.kind === "strings" ? raw.split(",").filter((s) => s !== "") : [raw];
      values.set(spec.name, [...prev, ...added]);
    } else {
      values.set(spec.name, raw);
    }
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const spec = byName.get(name);
      if (!spec) throw new CommandError(`unknown flag: --${name}`);
      let raw: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
      if (raw === undefined && spec.kind !== "bool") {
        if (spec.bareValue !== undefined) raw = spec.bareValue;
        else if (i + 1 < args.length) raw = args[++i];
      }
      set(spec, raw, `--${name}`);
    } else if (arg.startsWith("-") && arg.length > 1) {
      const letter = arg[1];
      const spec = byShort.get(letter);
      if (!spec) throw new CommandError(`unknown shorthand flag: '${letter}' in ${arg}`);
      let raw: string | undefined = arg.length > 2 ? arg.slice(arg[2] === "=" ? 3 : 2) : undefined;
      if (raw === undefined && spec.kind !== "bool" && i + 1 < args.length) raw = args[++i];
      set(spec, raw, `-${letter}, --${spec.name}`);
    } else {
      positionals.push(arg);
    }
  }
  return { values, positionals };
}

/** The `Flags:` part of a help text, one flag per entry as kubectl lays them out. */
export function flagHelp(specs: FlagSpec[]): string {
  return specs.map((s) => {
    const names = s.short ? `-${s.short}, --${s.name}` : `    --${s.name}`;
    const def = s.default !== undefined ? `=${s.default}` : s.kind === "bool" ? "=false" : "";
    const noop = s.noop ? " (accepted; does nothing in this client)" : "";
    return `    ${names}${def}:\n\t${s.help}${noop}\n`;
  }).join("\n");
}
