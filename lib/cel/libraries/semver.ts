/**
 * Kubernetes' semver library: `semver(s)`, `semver(s, normalize)`, `isSemver(s)`,
 * `isSemver(s, normalize)` and the Semver members `major`, `minor`, `patch`, `isGreaterThan`,
 * `isLessThan` and `compareTo`. Versions are Semantic Versioning 2.0.0 (`1.2.3-rc.1+build`,
 * no leading zeros) as blang/semver parses them; `normalize` first drops a leading `v`, leading
 * zeros and fills in a missing minor or patch (`v1.02` is `1.2.0`). Build metadata does not count
 * in comparisons or equality.
 */

import type { CelValue } from "@bufbuild/cel";
import type { Library, Overload } from "../library.ts";
import { type OpaqueKind, unwrapOpaque, wrapOpaque } from "../opaque.ts";
import { BOOL, INT, opaque, STRING, type Type } from "../types.ts";

interface Version {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string[];
  build: string[];
}

const precedence = (v: Version) =>
  `${v.major}.${v.minor}.${v.patch}${v.pre.length ? `-${v.pre.join(".")}` : ""}`;

const SEMVER_KIND: OpaqueKind<Version> = { name: "kubernetes.Semver", key: precedence };
const SEMVER = opaque(SEMVER_KIND.name);

const NUMERIC = /^\d+$/;
const IDENTIFIER = /^[0-9A-Za-z-]+$/;

function number(s: string, what: string): bigint {
  if (!NUMERIC.test(s)) throw new Error(`Invalid character(s) found in ${what} number "${s}"`);
  if (s.length > 1 && s[0] === "0") {
    const name = what[0].toUpperCase() + what.slice(1);
    throw new Error(`${name} number must not contain leading zeroes "${s}"`);
  }
  return BigInt(s);
}

/** A strict Semantic Version; throws with blang/semver's messages. */
export function parseSemver(s: string): Version {
  const plus = s.indexOf("+");
  const build = plus < 0 ? [] : s.slice(plus + 1).split(".");
  const rest = plus < 0 ? s : s.slice(0, plus);
  const dash = rest.indexOf("-");
  const core = dash < 0 ? rest : rest.slice(0, dash);
  const pre = dash < 0 ? [] : rest.slice(dash + 1).split(".");
  const parts = core.split(".");
  if (parts.length !== 3) throw new Error("No Major.Minor.Patch elements found");
  const [major, minor, patch] = [
    number(parts[0], "major"),
    number(parts[1], "minor"),
    number(parts[2], "patch"),
  ];
  for (const p of pre) {
    if (p === "") throw new Error("Prerelease is empty");
    if (!IDENTIFIER.test(p)) throw new Error(`Invalid character(s) found in prerelease "${p}"`);
    if (NUMERIC.test(p) && p.length > 1 && p[0] === "0") {
      throw new Error(`Numeric PreRelease version must not contain leading zeroes "${p}"`);
    }
  }
  for (const b of build) {
    if (b === "") throw new Error("Build meta data is empty");
    if (!IDENTIFIER.test(b)) throw new Error(`Invalid character(s) found in build meta "${b}"`);
  }
  return { major, minor, patch, pre, build };
}

/** Kubernetes' normalization before parsing: no `v`, no leading zeros, three numbers. */
function normalizeAndParse(s: string): Version {
  const parts = (s.startsWith("v") ? s.slice(1) : s).split(".");
  const split = parts.length > 3 ? [...parts.slice(0, 2), parts.slice(2).join(".")] : parts;
  const trimmed = split.map((p) => {
    if (p.length <= 1) return p;
    const t = p.replace(/^0+/, "");
    return t === "" || !/^\d/.test(t) ? `0${t}` : t;
  });
  if (trimmed.length < 3) {
    if (/[+-]/.test(trimmed[trimmed.length - 1])) {
      throw new Error("short version cannot contain PreRelease/Build meta data");
    }
    while (trimmed.length < 3) trimmed.push("0");
  }
  return parseSemver(trimmed.join("."));
}

function compareIdentifiers(a: string, b: string): number {
  const an = NUMERIC.test(a);
  const bn = NUMERIC.test(b);
  if (an && bn) return Math.sign(Number(BigInt(a) - BigInt(b)));
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareSemver(a: Version, b: Version): number {
  for (const k of ["major", "minor", "patch"] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  if (!a.pre.length || !b.pre.length) return a.pre.length ? -1 : b.pre.length ? 1 : 0;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const c = compareIdentifiers(a.pre[i], b.pre[i]);
    if (c !== 0) return c;
  }
  return Math.sign(a.pre.length - b.pre.length);
}

const v = (x: CelValue | undefined) => unwrapOpaque(SEMVER_KIND, x!);
const parse = (s: CelValue, normalize: CelValue) =>
  normalize === true ? normalizeAndParse(s as string) : parseSemver(s as string);
const valid = (s: CelValue, normalize: CelValue) => {
  try {
    parse(s, normalize);
    return true;
  } catch {
    return false;
  }
};

const member = (
  name: string,
  args: Type[],
  result: Type,
  impl: (self: Version, args: CelValue[]) => CelValue,
): Overload => ({
  name,
  target: SEMVER,
  args,
  result,
  impl: (self, values) => impl(v(self), values),
  cost: () => 1,
});

export const semver: Library = {
  overloads: [
    {
      name: "semver",
      args: [STRING],
      result: SEMVER,
      impl: (_, [s]) => wrapOpaque(SEMVER_KIND, parse(s, false)),
    },
    {
      name: "semver",
      args: [STRING, BOOL],
      result: SEMVER,
      impl: (_, [s, n]) => wrapOpaque(SEMVER_KIND, parse(s, n)),
    },
    { name: "isSemver", args: [STRING], result: BOOL, impl: (_, [s]) => valid(s, false) },
    { name: "isSemver", args: [STRING, BOOL], result: BOOL, impl: (_, [s, n]) => valid(s, n) },
    member("major", [], INT, (self) => self.major),
    member("minor", [], INT, (self) => self.minor),
    member("patch", [], INT, (self) => self.patch),
    member("isGreaterThan", [SEMVER], BOOL, (self, [o]) => compareSemver(self, v(o)) > 0),
    member("isLessThan", [SEMVER], BOOL, (self, [o]) => compareSemver(self, v(o)) < 0),
    member("compareTo", [SEMVER], INT, (self, [o]) => BigInt(compareSemver(self, v(o)))),
  ],
};
