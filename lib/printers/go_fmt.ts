/**
 * Go's `fmt.Sprintf`, `fmt.Sprint` and `fmt.Sprintln` for the values a kubectl Go template
 * handles (JSON-decoded values, see `go_value.ts`): the verbs `%v %+v %#v %T %t %d %b %o %O %x %X
 * %c %q %U %e %E %f %F %g %G %s %%`, the flags `+ - # 0` and space, width and precision (also
 * `*`), and Go's error forms `%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA int64=1)`.
 * Composite values format element by element, as Go does (`[%!s(int64=1) a]`).
 *
 * @module
 */

import {
  GoFloat,
  goFloat,
  GoInt,
  goPrint,
  goQuote,
  goSharpV,
  goTypeName,
  isGoInt,
  NO_VALUE,
  sortedKeys,
} from "./go_value.ts";

interface Spec {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width?: number;
  precision?: number;
  verb: string;
}

/** `fmt.Sprintf(format, args...)`. */
export function goSprintf(format: string, args: unknown[]): string {
  let out = "";
  let argIndex = 0;
  let i = 0;
  while (i < format.length) {
    const pct = format.indexOf("%", i);
    if (pct < 0) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, pct);
    i = pct + 1;
    const spec: Spec = {
      plus: false,
      minus: false,
      sharp: false,
      space: false,
      zero: false,
      verb: "",
    };
    for (; i < format.length; i++) {
      const f = format[i];
      if (f === "+") spec.plus = true;
      else if (f === "-") spec.minus = true;
      else if (f === "#") spec.sharp = true;
      else if (f === " ") spec.space = true;
      else if (f === "0") spec.zero = true;
      else break;
    }
    const num = (): number | undefined => {
      if (format[i] === "*") {
        i++;
        const a = args[argIndex++];
        const n = a instanceof GoInt
          ? a.value
          : typeof a === "number" && isGoInt(a)
          ? a
          : undefined;
        return n;
      }
      const m = /^\d+/.exec(format.slice(i));
      if (!m) return undefined;
      i += m[0].length;
      return Number(m[0]);
    };
    spec.width = num();
    if (format[i] === ".") {
      i++;
      spec.precision = num() ?? 0;
    }
    if (i >= format.length) {
      out += "%!(NOVERB)";
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    spec.verb = verb;
    if (verb === "%") {
      out += "%";
      continue;
    }
    if (argIndex >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatArg(args[argIndex++], spec);
  }
  if (argIndex < args.length) {
    const extra = args.slice(argIndex).map((
      a,
    ) => (a === null || a === NO_VALUE ? "<nil>" : `${goTypeName(a)}=${goPrint(a)}`));
    out += `%!(EXTRA ${extra.join(", ")})`;
  }
  return out;
}

/** `fmt.Sprint(args...)`: spaces only between operands when neither is a string. */
export function goSprint(args: unknown[]): string {
  let out = "";
  args.forEach((a, i) => {
    const isString = typeof a === "string";
    if (i > 0 && !isString && typeof args[i - 1] !== "string") out += " ";
    out += goPrint(a);
  });
  return out;
}

/** `fmt.Sprintln(args...)`: spaces between all operands and a newline. */
export function goSprintln(args: unknown[]): string {
  return args.map((a) => goPrint(a)).join(" ") + "\n";
}

function formatArg(arg: unknown, spec: Spec): string {
  if (spec.verb === "T") return pad(goTypeName(arg), spec);
  if (spec.verb === "v" && spec.sharp) return pad(goSharpV(arg), spec);
  if (arg === null || arg === undefined || arg === NO_VALUE) {
    return spec.verb === "v" ? pad("<nil>", spec) : `%!${spec.verb}(<nil>)`;
  }
  return formatValue(arg, spec);
}

function formatValue(v: unknown, spec: Spec, nested = false): string {
  // Inside a map or slice Go prints a nil element as <nil> whatever the verb.
  if (v === null || v === NO_VALUE) {
    return spec.verb === "v" || nested ? pad("<nil>", spec) : `%!${spec.verb}(<nil>)`;
  }
  if (Array.isArray(v)) return `[${v.map((e) => formatValue(e, spec, true)).join(" ")}]`;
  if (typeof v === "object" && !(v instanceof GoFloat) && !(v instanceof GoInt)) {
    const obj = v as Record<string, unknown>;
    return `map[${
      sortedKeys(obj).map((k) => `${formatValue(k, spec, true)}:${formatValue(obj[k], spec, true)}`)
        .join(" ")
    }]`;
  }
  if (typeof v === "boolean") {
    return spec.verb === "v" || spec.verb === "t" ? pad(String(v), spec) : badVerb(v, spec);
  }
  if (typeof v === "string") return formatString(v, spec);
  if (v instanceof GoInt || (typeof v === "number" && isGoInt(v))) {
    return formatInt(v instanceof GoInt ? v.value : v as number, v, spec);
  }
  return formatFloat(v instanceof GoFloat ? v.value : v as number, v, spec);
}

/** Go's `%!d(string=x)`: the value printed with `%v` and the verb's width and precision. */
function badVerb(v: unknown, spec: Spec): string {
  return `%!${spec.verb}(${goTypeName(v)}=${formatValue(v, { ...spec, verb: "v" }, true)})`;
}

function formatString(s: string, spec: Spec): string {
  switch (spec.verb) {
    case "v":
    case "s": {
      const t = spec.precision === undefined ? s : Array.from(s).slice(0, spec.precision).join("");
      return pad(t, spec);
    }
    case "q":
      return pad(
        spec.sharp && canBackquote(s) ? `\`${s}\`` : goQuote(s),
        spec,
      );
    case "x":
    case "X": {
      const prefix = spec.sharp ? (spec.verb === "X" ? "0X" : "0x") : "";
      const bytes = Array.from(new TextEncoder().encode(s)).map((b) => {
        const h = b.toString(16).padStart(2, "0");
        return spec.verb === "X" ? h.toUpperCase() : h;
      });
      // With a space every byte gets the prefix; without, only the first.
      const hex = spec.space ? bytes.map((b) => prefix + b).join(" ") : prefix + bytes.join("");
      return pad(hex, spec);
    }
  }
  return badVerb(s, spec);
}

function formatInt(n: number, original: unknown, spec: Spec): string {
  const neg = n < 0;
  const abs = Math.abs(n);
  let digits: string;
  let prefix = "";
  switch (spec.verb) {
    case "v":
    case "d":
      digits = String(abs);
      break;
    case "b":
      digits = abs.toString(2);
      break;
    case "o":
    case "O":
      digits = abs.toString(8);
      if (spec.verb === "O") prefix = "0o";
      else if (spec.sharp) prefix = "0";
      break;
    case "x":
    case "X":
      digits = abs.toString(16);
      if (spec.verb === "X") digits = digits.toUpperCase();
      if (spec.sharp) prefix = spec.verb === "X" ? "0X" : "0x";
      break;
    case "c":
      return pad(String.fromCodePoint(n), spec);
    case "q":
      return pad(quoteRune(n), spec);
    case "U": {
      const u = `U+${abs.toString(16).toUpperCase().padStart(4, "0")}`;
      return pad(spec.sharp ? `${u} '${String.fromCodePoint(n)}'` : u, spec);
    }
    default:
      return badVerb(original, spec);
  }
  if (spec.precision !== undefined) digits = digits.padStart(spec.precision, "0");
  const sign = neg ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  return padNumber(sign, prefix + digits, spec);
}

function formatFloat(f: number, original: unknown, spec: Spec): string {
  const sign = f < 0 || Object.is(f, -0) ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  const abs = Math.abs(f);
  let body: string;
  switch (spec.verb) {
    case "v":
      body = spec.precision === undefined ? goFloat(abs) : formatG(abs, spec.precision);
      break;
    case "g":
    case "G":
      body = spec.precision === undefined ? goFloat(abs) : formatG(abs, spec.precision);
      if (spec.verb === "G") body = body.toUpperCase();
      break;
    case "e":
    case "E":
      body = expForm(toExponentialEven(abs, spec.precision ?? 6));
      if (spec.verb === "E") body = body.toUpperCase();
      break;
    case "f":
    case "F":
      body = toFixedEven(abs, spec.precision ?? 6);
      break;
    case "x":
    case "X":
      if (spec.precision !== undefined) return badVerb(original, spec); // not supported
      body = hexFloat(abs);
      if (spec.verb === "X") body = body.toUpperCase();
      break;
    default:
      return badVerb(original, spec);
  }
  return padNumber(sign, body, spec);
}

/** `%x` of a float64: `0x1.8p+00`, the shortest hexadecimal mantissa. */
function hexFloat(abs: number): string {
  if (abs === 0) return "0x0p+00";
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, abs);
  const bits = view.getBigUint64(0);
  let exp = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  if (exp === 0) {
    // A subnormal: shift until the leading 1 sits where a normal number's implicit one is.
    exp = 1;
    while ((mantissa & (1n << 52n)) === 0n) {
      mantissa <<= 1n;
      exp--;
    }
    mantissa &= (1n << 52n) - 1n;
  }
  const e = exp - 1023;
  const fraction = mantissa.toString(16).padStart(13, "0").replace(/0+$/, "");
  const sign = e < 0 ? "-" : "+";
  return `0x1${fraction ? "." + fraction : ""}p${sign}${String(Math.abs(e)).padStart(2, "0")}`;
}

/** `%.Ng`: N significant digits, %e form when the exponent is < -4 or >= N. */
function formatG(abs: number, precision: number): string {
  const p = precision === 0 ? 1 : precision;
  if (abs === 0) return "0";
  const [mantissa, expText] = toExponentialEven(abs, p - 1).split("e");
  const exp = Number(expText);
  const trimmed = mantissa.includes(".") ? mantissa.replace(/\.?0+$/, "") : mantissa;
  const digits = trimmed.replace(".", "").length;
  const eprec = p > digits && digits >= exp + 1 ? digits : p;
  if (exp < -4 || exp >= eprec) return expForm(`${trimmed}e${expText}`);
  return String(Number(toExponentialEven(abs, p - 1)));
}

/**
 * `toFixed` with Go's rounding: JavaScript rounds an exact tie (2.5 to 0 places) away from
 * zero, Go to even. A tie shows as a 5 followed only by zeros in a longer exact expansion.
 */
function toFixedEven(abs: number, p: number): string {
  const rounded = abs.toFixed(p);
  if (p + 25 > 100) return rounded;
  const long = abs.toFixed(p + 25);
  const tail = long.slice(long.length - 25);
  if (!/^50*$/.test(tail)) return rounded;
  const truncated = long.slice(0, long.length - 25).replace(/\.$/, "");
  const lastDigit = Number(truncated.replace(".", "").at(-1));
  return lastDigit % 2 === 0 ? truncated : rounded;
}

/** `toExponential` with Go's round-half-to-even on exact ties. */
function toExponentialEven(abs: number, p: number): string {
  const rounded = abs.toExponential(p);
  if (p + 25 > 100) return rounded;
  const [long, exp] = abs.toExponential(p + 25).split("e");
  const tail = long.slice(long.length - 25);
  if (!/^50*$/.test(tail)) return rounded;
  const truncated = long.slice(0, long.length - 25).replace(/\.$/, "");
  const lastDigit = Number(truncated.replace(".", "").at(-1));
  return lastDigit % 2 === 0 ? `${truncated}e${exp}` : rounded;
}

/** JavaScript's `1.5e+3` as Go's `1.5e+03`. */
function expForm(js: string): string {
  const [m, e] = js.split("e");
  const sign = e.startsWith("-") ? "-" : "+";
  return `${m}e${sign}${e.replace(/^[+-]/, "").padStart(2, "0")}`;
}

/** Go's `strconv.CanBackquote`: no backquote and no control character but tab. */
function canBackquote(s: string): boolean {
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === "`" || c === 0x7f || (c < 0x20 && ch !== "\t")) return false;
  }
  return true;
}

function quoteRune(n: number): string {
  const special: Record<number, string> = {
    7: "\\a",
    8: "\\b",
    9: "\\t",
    10: "\\n",
    11: "\\v",
    12: "\\f",
    13: "\\r",
    39: "\\'",
    92: "\\\\",
  };
  // Not a valid rune: Go quotes the replacement character.
  if (n < 0 || n > 0x10ffff || (n >= 0xd800 && n < 0xe000)) return "'\uFFFD'";
  if (special[n]) return `'${special[n]}'`;
  if (n < 0x20 || n === 0x7f) return `'\\x${n.toString(16).padStart(2, "0")}'`;
  const ch = String.fromCodePoint(n);
  if (ch === " " || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) return `'${ch}'`;
  const hex = n.toString(16);
  return n <= 0xffff ? `'\\u${hex.padStart(4, "0")}'` : `'\\U${hex.padStart(8, "0")}'`;
}

function pad(s: string, spec: Spec): string {
  const width = spec.width ?? 0;
  const len = Array.from(s).length;
  if (len >= width) return s;
  const fill = (spec.zero && !spec.minus ? "0" : " ").repeat(width - len);
  return spec.minus ? s + " ".repeat(width - len) : fill + s;
}

/** Numbers pad with zeros after the sign when the `0` flag is set. */
function padNumber(sign: string, body: string, spec: Spec): string {
  const width = spec.width ?? 0;
  const len = sign.length + body.length;
  if (len >= width) return sign + body;
  if (spec.minus) return sign + body + " ".repeat(width - len);
  if (spec.zero) return sign + "0".repeat(width - len) + body;
  return " ".repeat(width - len) + sign + body;
}
