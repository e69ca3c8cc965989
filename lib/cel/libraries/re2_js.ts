/**
 * An RE2 pattern spelled as a JS RegExp source (for flags "gu"). find/findAll need where a
 * match is, which @bufbuild/re2 (behind `matches`) does not tell; the caller checks the pattern
 * as RE2 first, so this only rewrites valid RE2. Where the two engines differ, RE2's meaning is
 * written out: `.`, `^`, `$`, `\A`, `\z`, `\s` and the flags m, s and U are expanded here, and
 * only the flag i becomes a JS modifier group. Captures are not needed and become `(?:`.
 */

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

type Range = readonly [number, number];

const MAX_CODE_POINT = 0x10ffff;
const SPACE: readonly Range[] = [[9, 10], [12, 13], [32, 32]];
const POSIX: Readonly<Record<string, readonly Range[]>> = {
  alnum: [[48, 57], [65, 90], [97, 122]],
  alpha: [[65, 90], [97, 122]],
  ascii: [[0, 127]],
  blank: [[9, 9], [32, 32]],
  cntrl: [[0, 31], [127, 127]],
  digit: [[48, 57]],
  graph: [[33, 126]],
  lower: [[97, 122]],
  print: [[32, 126]],
  punct: [[33, 47], [58, 64], [91, 96], [123, 126]],
  space: [[9, 13], [32, 32]],
  upper: [[65, 90]],
  word: [[48, 57], [65, 90], [95, 95], [97, 122]],
  xdigit: [[48, 57], [65, 70], [97, 102]],
};

const SYNTAX = /[\^$\\.*+?()[\]{}|/]/;
const SINGLE_ESCAPES: Readonly<Record<string, number>> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };

const hex = (code: number) => `\\u{${code.toString(16)}}`;
const rangeText = ([lo, hi]: Range) => lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`;

function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const classText = (ranges: readonly Range[], negated: boolean) =>
  (negated ? complement(ranges) : ranges).map(rangeText).join("");

const modifier = (from: boolean, to: boolean) => from === to ? undefined : to ? "(?i:" : "(?-i:";

class Translator {
  #pos = 0;
  #out = "";
  #flags: Flags = { i: false, m: false, s: false, U: false };
  /** Per open group: the flags outside it and the modifier groups `(?i)` opened inside it. */
  #groups: { outer: Flags; opened: string[] }[] = [{ outer: this.#flags, opened: [] }];

  constructor(readonly pattern: string) {}

  run(): string {
    while (this.#pos < this.pattern.length) this.#step();
    this.#out += ")".repeat(this.#groups[0].opened.length);
    return this.#out;
  }

  #peek(offset = 0): string {
    return this.pattern[this.#pos + offset] ?? "";
  }

  #step() {
    const c = this.pattern[this.#pos++];
    const top = this.#groups[this.#groups.length - 1];
    switch (c) {
      case "\\":
        this.#out += this.#escape(false).text;
        return;
      case "[":
        this.#out += this.#charClass();
        return;
      case "(":
        this.#openGroup(top);
        return;
      case ")":
        this.#out += ")".repeat(top.opened.length) + ")";
        this.#flags = this.#groups.pop()!.outer;
        return;
      case "|":
        // Inline flags hold until the group ends, on both sides of the bar.
        this.#out += ")".repeat(top.opened.length) + "|" + top.opened.join("");
        return;
      case ".":
        this.#out += this.#flags.s ? "[\\s\\S]" : "[^\\n]";
        return;
      case "^":
        this.#out += this.#flags.m ? "(?<![^\\n])" : "(?<![\\s\\S])";
        return;
      case "$":
        this.#out += this.#flags.m ? "(?![^\\n])" : "(?![\\s\\S])";
        return;
      case "*":
      case "+":
      case "?":
        this.#out += c + this.#laziness();
        return;
      case "{": {
        const repeat = /^\d+(,\d*)?\}/.exec(this.pattern.slice(this.#pos));
        if (repeat === null) {
          this.#out += "\\{";
          return;
        }
        this.#pos += repeat[0].length;
        this.#out += `{${repeat[0]}${this.#laziness()}`;
        return;
      }
      default:
        this.#out += SYNTAX.test(c) ? `\\${c}` : c;
    }
  }

  /** `?` after a repetition makes it lazy; the flag U swaps greedy and lazy. */
  #laziness(): string {
    const lazy = this.#peek() === "?";
    if (lazy) this.#pos++;
    return lazy !== this.#flags.U ? "?" : "";
  }

  #openGroup(top: { opened: string[] }) {
    const enter = (flags: Flags, open: string) => {
      this.#groups.push({ outer: this.#flags, opened: [] });
      this.#flags = flags;
      this.#out += open;
    };
    if (this.#peek() !== "?") return enter(this.#flags, "(?:");
    this.#pos++;
    const name = /^P?<\w+>/.exec(this.pattern.slice(this.#pos));
    if (name !== null) {
      this.#pos += name[0].length;
      return enter(this.#flags, "(?:");
    }
    const spec = /^([imsU]*)(?:-([imsU]*))?([:)])/.exec(this.pattern.slice(this.#pos));
    if (spec === null) throw new Error(`unsupported group at offset ${this.#pos}`);
    this.#pos += spec[0].length;
    const flags = { ...this.#flags };
    for (const f of spec[1]) flags[f as keyof Flags] = true;
    for (const f of spec[2] ?? "") flags[f as keyof Flags] = false;
    const open = modifier(this.#flags.i, flags.i);
    if (spec[3] === ":") return enter(flags, open ?? "(?:");
    // `(?flags)` changes the flags for the rest of the enclosing group.
    this.#flags = flags;
    if (open !== undefined) {
      top.opened.push(open);
      this.#out += open;
    }
  }

  /** An escape; `code` is set when it stands for one character (usable in a class range). */
  #escape(inClass: boolean): { text: string; code?: number } {
    const c = this.pattern[this.#pos++];
    const char = (code: number) => ({ text: hex(code), code });
    switch (c) {
      case "d":
      case "D":
      case "w":
      case "W":
      case "b":
      case "B":
        return { text: `\\${c}` };
      case "s":
        return { text: inClass ? classText(SPACE, false) : "[\\t\\n\\f\\r ]" };
      case "S":
        return { text: inClass ? classText(SPACE, true) : "[^\\t\\n\\f\\r ]" };
      case "A":
        return { text: "(?<![\\s\\S])" };
      case "z":
        return { text: "(?![\\s\\S])" };
      case "C":
        return { text: "[\\s\\S]" };
      case "p":
      case "P":
        return { text: this.#unicodeClass(c === "P", inClass) };
      case "Q": {
        const end = this.pattern.indexOf("\\E", this.#pos);
        const text = this.pattern.slice(this.#pos, end < 0 ? undefined : end);
        this.#pos = end < 0 ? this.pattern.length : end + 2;
        return { text: [...text].map((ch) => hex(ch.codePointAt(0)!)).join("") };
      }
      case "x": {
        const m = /^\{([0-9a-fA-F]+)\}|^[0-9a-fA-F]{2}/.exec(this.pattern.slice(this.#pos));
        if (m === null) throw new Error("invalid \\x escape");
        this.#pos += m[0].length;
        return char(parseInt(m[1] ?? m[0], 16));
      }
      default: {
        if (c in SINGLE_ESCAPES) return char(SINGLE_ESCAPES[c]);
        const octal = /^[0-7]{0,2}/.exec(this.pattern.slice(this.#pos))![0];
        if (/[0-7]/.test(c)) {
          this.#pos += octal.length;
          return char(parseInt(c + octal, 8));
        }
        if (c < "\x80" && !/[A-Za-z0-9]/.test(c)) return char(c.charCodeAt(0));
        throw new Error(`unsupported escape \\${c}`);
      }
    }
  }

  #unicodeClass(negated: boolean, inClass: boolean): string {
    let name = this.#peek();
    if (name === "{") {
      const end = this.pattern.indexOf("}", this.#pos);
      name = this.pattern.slice(this.#pos + 1, end);
      this.#pos = end + 1;
    } else {
      this.#pos++;
    }
    if (name.startsWith("^")) {
      negated = !negated;
      name = name.slice(1);
    }
    if (name === "Any") {
      if (inClass) return negated ? "" : rangeText([0, MAX_CODE_POINT]);
      return negated ? "[^\\s\\S]" : "[\\s\\S]";
    }
    // One- and two-letter names are general categories, longer ones scripts.
    const property = name.length <= 2 ? name : `Script=${name}`;
    return `\\${negated ? "P" : "p"}{${property}}`;
  }

  #charClass(): string {
    let negated = false;
    if (this.#peek() === "^") {
      negated = true;
      this.#pos++;
    }
    let body = "";
    // A `]` right after the opening bracket is a literal.
    for (let first = true; first || this.#peek() !== "]"; first = false) {
      const posix = /^\[:(\^?)(\w+):\]/.exec(this.pattern.slice(this.#pos));
      if (posix !== null && posix[2] in POSIX) {
        this.#pos += posix[0].length;
        body += classText(POSIX[posix[2]], posix[1] === "^");
        continue;
      }
      const lo = this.#classAtom();
      if (this.#peek() === "-" && this.#peek(1) !== "]" && lo.code !== undefined) {
        this.#pos++;
        const hi = this.#classAtom();
        if (hi.code === undefined) throw new Error("invalid character class range");
        body += rangeText([lo.code, hi.code]);
      } else {
        body += lo.text;
      }
    }
    this.#pos++;
    return `[${negated ? "^" : ""}${body}]`;
  }

  #classAtom(): { text: string; code?: number } {
    if (this.#peek() === "\\") {
      this.#pos++;
      return this.#escape(true);
    }
    const code = this.pattern.codePointAt(this.#pos)!;
    this.#pos += code > 0xffff ? 2 : 1;
    return { text: hex(code), code };
  }
}

/** The JS source for a valid RE2 pattern; throws for the few constructs it cannot express. */
export function re2ToJs(pattern: string): string {
  return new Translator(pattern).run();
}
