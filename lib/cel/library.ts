/**
 * How a platform library declares its functions once for both stages: the checker reads the
 * signatures (with opaque and parameterised types), the engine gets @bufbuild/cel functions that
 * dispatch on those types and charge the cost budget. The standard library is wrapped the same
 * way so that every call is metered.
 */

import {
  type CelFunc,
  celFunc,
  type CelInput,
  celMethod,
  CelScalar,
  type CelType,
  celType,
  type CelValue,
  isCelError,
  listType,
  mapType,
  objectType,
} from "@bufbuild/cel";
import { charge, defaultCallCost } from "./cost.ts";
import { opaqueTypeName } from "./opaque.ts";
import { STANDARD_FUNCTIONS } from "./standard.ts";
import { fromCelType, type Type, typeName } from "./types.ts";

/** A function as the checker sees it; `target` is the receiver of a member function. */
export interface Signature {
  readonly name: string;
  readonly target?: Type;
  readonly args: readonly Type[];
  readonly result: Type;
}

export interface Overload extends Signature {
  impl(target: CelValue | undefined, args: CelValue[]): CelInput;
  /** The cost of one call; by default 1 plus the strings it is given. */
  cost?(target: CelValue | undefined, args: CelValue[]): number;
}

/** A load-time check of a string literal argument (a regex, a quantity, a URL). */
export interface LiteralCheck {
  readonly function: string;
  /** Index into the arguments, not counting the receiver. */
  readonly arg: number;
  /** A problem with the literal, or undefined when it is fine. */
  problem(literal: string): string | undefined;
}

export interface Library {
  readonly overloads: readonly Overload[];
  readonly literalChecks?: readonly LiteralCheck[];
}

export type FunctionTable = ReadonlyMap<string, readonly Signature[]>;

export interface Functions {
  /** What the engine runs, all metered. */
  readonly runtime: readonly CelFunc[];
  /** What the checker resolves calls against. */
  readonly table: FunctionTable;
  readonly literalChecks: readonly LiteralCheck[];
}

const SCALARS: Readonly<Record<string, CelType>> = {
  bool: CelScalar.BOOL,
  int: CelScalar.INT,
  uint: CelScalar.UINT,
  double: CelScalar.DOUBLE,
  string: CelScalar.STRING,
  bytes: CelScalar.BYTES,
  null_type: CelScalar.NULL,
  type: CelScalar.TYPE,
};

/** What the engine checks of an argument: its kind only (opaque values travel as maps). */
function runtimeType(t: Type): CelType {
  switch (t.kind) {
    case "scalar":
      return SCALARS[t.name] ?? objectType(t.name);
    case "list":
      return listType(CelScalar.DYN);
    case "map":
    case "object":
    case "opaque":
      return mapType(CelScalar.DYN, CelScalar.DYN);
    default:
      return CelScalar.DYN;
  }
}

/** Whether a value may be passed where `t` is declared, beyond the engine's kind check. */
function fits(t: Type | undefined, v: CelValue | undefined): boolean {
  if (t === undefined) return true;
  if (t.kind === "opaque") return opaqueTypeName(v) === t.name;
  if (t.kind === "map" || t.kind === "object") return opaqueTypeName(v) === undefined;
  return true;
}

function runtimeKey(o: Signature): string {
  const target = o.target ? runtimeType(o.target).name : "";
  return `${target}.${o.name}(${o.args.map((a) => runtimeType(a).name).join(",")})`;
}

function describe(target: CelValue | undefined, args: CelValue[]): string {
  const name = (v: CelValue) => opaqueTypeName(v) ?? celType(v).name;
  return `${target === undefined ? "" : `${name(target)}.`}(${args.map(name).join(", ")})`;
}

/** One engine function for the overloads the engine cannot tell apart. */
function dispatcher(group: readonly Overload[]): CelFunc {
  const { name, target } = group[0];
  const run = (self: CelValue | undefined, args: CelValue[]): CelInput => {
    const o = group.find((o) => fits(o.target, self) && o.args.every((t, i) => fits(t, args[i])));
    if (o === undefined) {
      throw new Error(
        `found no matching overload for '${name}' applied to ${describe(self, args)}`,
      );
    }
    charge(o.cost ? o.cost(self, args) : defaultCallCost(name, self, args));
    return o.impl(self, args);
  };
  const args = group[0].args.map(runtimeType);
  return target === undefined
    ? celFunc(name, args, CelScalar.DYN, (...values) => run(undefined, values))
    : celMethod(name, runtimeType(target), args, CelScalar.DYN, function (...values) {
      return run(this, values);
    });
}

/** A standard function that charges for its calls. */
function metered(f: CelFunc): CelFunc {
  const run = (target: CelValue | undefined, args: CelValue[]): CelValue => {
    charge(defaultCallCost(f.name, target, args));
    const result = f.call(0, target, args);
    if (result === undefined) throw new Error(`found no matching overload for '${f.name}'`);
    if (isCelError(result)) throw new Error(result.message);
    return result;
  };
  return f.target === undefined
    ? celFunc(f.name, f.arguments, f.result, (...args) => run(undefined, args))
    : celMethod(f.name, f.target, f.arguments, f.result, function (...args) {
      return run(this, args);
    });
}

/** The standard library and the given libraries, for the engine and for the checker. */
export function buildFunctions(libraries: readonly Library[]): Functions {
  const groups = new Map<string, Overload[]>();
  for (const o of libraries.flatMap((l) => l.overloads)) {
    const key = runtimeKey(o);
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  const table = new Map<string, Signature[]>();
  const declare = (s: Signature) => table.set(s.name, [...(table.get(s.name) ?? []), s]);
  for (const f of STANDARD_FUNCTIONS) {
    declare({
      name: f.name,
      target: f.target && fromCelType(f.target),
      args: f.arguments.map(fromCelType),
      result: fromCelType(f.result),
    });
  }
  for (const o of libraries.flatMap((l) => l.overloads)) declare(o);

  return {
    runtime: [...STANDARD_FUNCTIONS.map(metered), ...[...groups.values()].map(dispatcher)],
    table,
    literalChecks: libraries.flatMap((l) => l.literalChecks ?? []),
  };
}

/** For error messages: `name` applied to the argument types. */
export function signatureText(name: string, target: Type | undefined, args: Type[]): string {
  const receiver = target === undefined ? "" : `${typeName(target)}.`;
  return `'${name}' applied to '${receiver}(${args.map(typeName).join(", ")})'`;
}
