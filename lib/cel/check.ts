/**
 * The load-time type checker. It infers a type for every node from the declared variables and
 * the function signatures, and rejects what must fail for every input: undeclared names,
 * unknown functions, calls no overload accepts, fields an object does not have, bad literal
 * arguments (regexes, quantities, URLs), and what Kubernetes' checker rejects too (`?:` branches
 * of different types). Where it cannot know (a claim's value is dyn) it infers dyn and leaves the
 * check to run time, so an expression is never rejected for what an input might hold.
 */

import { type Call, type Comprehension, type Expr, stringLiteral } from "./ast.ts";
import { ExprError } from "./errors.ts";
import { type FunctionTable, type LiteralCheck, signatureText } from "./library.ts";
import { optionalOf, optionalValueType } from "./libraries/optional.ts";
import { OPT_INDEX, OPT_SELECT } from "./optional_syntax.ts";
import {
  assignable,
  BOOL,
  BYTES,
  DOUBLE,
  DYN,
  INT,
  isDyn,
  join,
  listOf,
  mapOf,
  NONE,
  NULL,
  sameType,
  STRING,
  substitute,
  TYPE,
  type Type,
  typeName,
  UINT,
} from "./types.ts";

export interface CheckContext {
  readonly variables: ReadonlyMap<string, Type>;
  readonly functions: FunctionTable;
  readonly literalChecks: readonly LiteralCheck[];
  /** When given, receives the type of every node (for the rewrites that depend on types). */
  readonly nodeTypes?: Map<bigint, Type>;
}

/** Identifiers that name types, as in `type(x) == string`. */
const TYPE_NAMES = new Set([
  "bool",
  "int",
  "uint",
  "double",
  "string",
  "bytes",
  "list",
  "map",
  "null_type",
  "type",
  "dyn",
]);

const MAP_KEYS = new Set(["bool", "int", "uint", "string"]);

/** An accumulator's type settles after a few passes over its loop; past that it is dyn. */
const MAX_LOOP_PASSES = 3;

/** The type of the expression; throws an {@link ExprError} at the first problem. */
export function check(root: Expr, context: CheckContext): Type {
  return new Checker(context).type(root, new Map());
}

type Scope = ReadonlyMap<string, Type>;
type MapEntry = Extract<Expr["exprKind"], { case: "structExpr" }>["value"]["entries"][number];

class Checker {
  constructor(readonly context: CheckContext) {}

  type(e: Expr, scope: Scope): Type {
    const t = this.infer(e, scope);
    this.context.nodeTypes?.set(e.id, t);
    return t;
  }

  infer(e: Expr, scope: Scope): Type {
    const k = e.exprKind;
    switch (k.case) {
      case "constExpr":
        return this.constant(k.value.constantKind.case);
      case "identExpr":
        return this.ident(k.value.name, e.id, scope);
      case "selectExpr":
        return this.select(e, k.value.operand!, k.value.field, k.value.testOnly, scope);
      case "callExpr":
        return this.call(e, k.value, scope);
      case "listExpr":
        return listOf(this.joinAll(k.value.elements.map((x) => this.type(x, scope))));
      case "structExpr":
        if (k.value.messageName !== "") {
          throw new ExprError(`creating '${k.value.messageName}' objects is not supported`, e.id);
        }
        return this.mapLiteral(e, k.value.entries, scope);
      case "comprehensionExpr":
        return this.comprehension(k.value, e.id, scope);
      default:
        throw new ExprError("unsupported expression", e.id);
    }
  }

  constant(kind: string | undefined): Type {
    switch (kind) {
      case "boolValue":
        return BOOL;
      case "int64Value":
        return INT;
      case "uint64Value":
        return UINT;
      case "doubleValue":
        return DOUBLE;
      case "stringValue":
        return STRING;
      case "bytesValue":
        return BYTES;
      case "nullValue":
        return NULL;
      default:
        return DYN;
    }
  }

  ident(name: string, id: bigint, scope: Scope): Type {
    const t = scope.get(name) ?? this.context.variables.get(name);
    if (t !== undefined) return t;
    if (TYPE_NAMES.has(name)) return TYPE;
    throw new ExprError(`undeclared reference to '${name}'`, id);
  }

  select(e: Expr, operand: Expr, field: string, testOnly: boolean, scope: Scope): Type {
    const t = this.type(operand, scope);
    // Selecting on an optional selects on its value: the result is optional too (cel-go).
    const held = optionalValueType(t);
    if (held !== undefined && !testOnly) return optionalOf(this.selectField(e, held, field));
    return testOnly ? (this.selectField(e, t, field), BOOL) : this.selectField(e, t, field);
  }

  selectField(e: Expr, t: Type, field: string): Type {
    let fieldType: Type;
    if (isDyn(t)) {
      fieldType = DYN;
    } else if (t.kind === "map") {
      fieldType = t.value;
    } else if (t.kind === "object") {
      if (Object.hasOwn(t.fields, field)) fieldType = t.fields[field];
      else if (t.open) fieldType = DYN;
      else throw new ExprError(`undefined field '${field}' of ${t.name}`, e.id);
    } else {
      throw new ExprError(`type '${typeName(t)}' does not support field selection`, e.id);
    }
    return fieldType;
  }

  call(e: Expr, call: Call, scope: Scope): Type {
    const args = call.args.map((a) => this.type(a, scope));
    switch (call.function) {
      case "_&&_":
      case "_||_":
        call.args.forEach((a, i) => this.expectBool(args[i], a.id, call.function));
        return BOOL;
      case "@not_strictly_false":
        return BOOL;
      case "_?_:_": {
        this.expectBool(args[0], call.args[0].id, "_?_:_");
        // `cond ? value : null` is left to run time (null is often "no value" in mappings).
        const hasNull = sameType(args[1], NULL) || sameType(args[2], NULL);
        const t = join(args[1], args[2]) ?? (hasNull ? DYN : undefined);
        if (t === undefined) {
          throw new ExprError(
            `found no matching overload for ${signatureText("_?_:_", undefined, args)}`,
            e.id,
          );
        }
        return t;
      }
      case "_[_]": {
        const held = optionalValueType(args[0]);
        if (held !== undefined) return optionalOf(this.index(e, held, args[1]));
        return this.index(e, args[0], args[1]);
      }
      case OPT_SELECT: {
        // `x.?f`: the field's type, optional; on an optional `x`, on its value.
        const field = stringLiteral(call.args[1])!;
        return optionalOf(this.selectField(e, optionalValueType(args[0]) ?? args[0], field));
      }
      case OPT_INDEX:
        // `x[?k]`: the element's type, optional.
        return optionalOf(this.index(e, optionalValueType(args[0]) ?? args[0], args[1]));
      case "_+_":
        // The standard signature says list(dyn); the elements' type is known here.
        if (args[0].kind === "list" && args[1].kind === "list") {
          // A set or map list stays one under concatenation (see list_semantics.ts).
          const elem = join(args[0].elem, args[1].elem) ?? DYN;
          return args[0].listType ? { ...args[0], elem } : listOf(elem);
        }
        return this.overload(e, call.function, call.target, call.args, args, scope);
      default:
        return this.overload(e, call.function, call.target, call.args, args, scope);
    }
  }

  expectBool(t: Type, id: bigint, fn: string) {
    if (!isDyn(t) && !sameType(t, BOOL)) {
      throw new ExprError(`'${fn}' expects bool operands, got ${typeName(t)}`, id);
    }
  }

  index(e: Expr, container: Type, key: Type): Type {
    if (isDyn(container)) return DYN;
    if (container.kind === "list" && (isDyn(key) || sameType(key, INT) || sameType(key, UINT))) {
      return container.elem;
    }
    if (container.kind === "map" && assignable(container.key, key, new Map())) {
      return container.value;
    }
    throw new ExprError(
      `found no matching overload for ${signatureText("_[_]", undefined, [container, key])}`,
      e.id,
    );
  }

  overload(
    e: Expr,
    name: string,
    target: Expr | undefined,
    argExprs: Expr[],
    args: Type[],
    scope: Scope,
  ): Type {
    const signatures = this.context.functions.get(name);
    if (signatures === undefined) throw new ExprError(`undeclared reference to '${name}'`, e.id);
    const targetType = target && this.type(target, scope);
    const results: Type[] = [];
    for (const s of signatures) {
      if ((s.target === undefined) !== (targetType === undefined)) continue;
      if (s.args.length !== args.length) continue;
      const bindings = new Map<string, Type>();
      const fits = (s.target === undefined || assignable(s.target, targetType!, bindings)) &&
        s.args.every((p, i) => assignable(p, args[i], bindings));
      if (fits) results.push(substitute(s.result, bindings));
    }
    if (results.length === 0) {
      throw new ExprError(
        `found no matching overload for ${signatureText(name, targetType, args)}`,
        e.id,
      );
    }
    this.checkLiterals(name, argExprs);
    return results.every((r) => sameType(r, results[0])) ? results[0] : DYN;
  }

  checkLiterals(name: string, argExprs: Expr[]) {
    for (const c of this.context.literalChecks) {
      if (c.function !== name) continue;
      const literal = stringLiteral(argExprs[c.arg]);
      const problem = literal === undefined ? undefined : c.problem(literal);
      if (problem !== undefined) throw new ExprError(problem, argExprs[c.arg].id);
    }
  }

  mapLiteral(e: Expr, entries: MapEntry[], scope: Scope): Type {
    const keys: Type[] = [];
    const values: Type[] = [];
    for (const entry of entries) {
      if (entry.keyKind.case !== "mapKey" || entry.value === undefined) {
        throw new ExprError("invalid map entry", e.id);
      }
      const key = this.type(entry.keyKind.value, scope);
      if (!isDyn(key) && !(key.kind === "scalar" && MAP_KEYS.has(key.name))) {
        throw new ExprError(`unsupported map key type '${typeName(key)}'`, entry.keyKind.value.id);
      }
      keys.push(key);
      const value = this.type(entry.value, scope);
      if (entry.optionalEntry) {
        // `{?k: v}`: v is an optional; the map holds its value.
        const held = optionalValueType(value) ?? (isDyn(value) ? DYN : undefined);
        if (held === undefined) {
          throw new ExprError(
            `found no matching overload for optional map entry of type '${typeName(value)}'`,
            entry.value.id,
          );
        }
        values.push(held);
      } else values.push(value);
    }
    return mapOf(this.joinAll(keys), this.joinAll(values));
  }

  /** Mixed element types make a list(dyn), as in cel-go. */
  joinAll(types: Type[]): Type {
    return types.reduce((acc, t) => join(acc, t) ?? DYN, NONE);
  }

  comprehension(c: Comprehension, id: bigint, scope: Scope): Type {
    const range = this.type(c.iterRange!, scope);
    const iterScope = new Map(scope);
    const [key, value] = this.iterationTypes(range, id);
    if (c.iterVar2 === "") {
      iterScope.set(c.iterVar, range.kind === "list" ? value : key);
    } else {
      iterScope.set(c.iterVar, key).set(c.iterVar2, value);
    }
    let accu = this.type(c.accuInit!, scope);
    for (let pass = 0;; pass++) {
      const loopScope = new Map(iterScope).set(c.accuVar, accu);
      this.expectBool(this.type(c.loopCondition!, loopScope), c.loopCondition!.id, "loop");
      const next = join(accu, this.type(c.loopStep!, loopScope)) ?? DYN;
      if (sameType(next, accu)) break;
      accu = pass < MAX_LOOP_PASSES ? next : DYN;
    }
    return this.type(c.result!, new Map(scope).set(c.accuVar, accu));
  }

  /** A list's index and element types, or a map's key and value types. */
  iterationTypes(range: Type, id: bigint): [Type, Type] {
    if (isDyn(range)) return [DYN, DYN];
    if (range.kind === "list") return [INT, range.elem];
    if (range.kind === "map") return [range.key, range.value];
    throw new ExprError(
      `expression of type '${typeName(range)}' cannot be the range of a comprehension`,
      id,
    );
  }
}
