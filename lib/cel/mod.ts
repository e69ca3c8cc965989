/**
 * CEL for configuration files: one environment per use, compiled and type-checked at load,
 * evaluated with a cost budget. Built on `@bufbuild/cel`.
 *
 * Environments (the variables an expression may name):
 * - `claims`:  `claims` (map of the JWT's claims) — JWT claim mappings and claim rules.
 * - `user`:    `user` (UserInfo: username, uid, groups, extra) — user validation rules.
 * - `request`: `request` (a SubjectAccessReviewSpec, v1 JSON shape) — authorization webhook
 *   match conditions.
 * - `admission`: `object`, `oldObject`, `namespaceObject` (dynamic), `request` (an
 *   AdmissionRequest) — admission webhook match conditions.
 * - `admissionPolicy`: those and `params` (dynamic), `variables` (a map) —
 *   ValidatingAdmissionPolicy validations, audit annotations, variables and match conditions.
 * - `crdRule`: `self` and `oldSelf` — a CustomResourceDefinition's validation rules, the two
 *   typed from the schema (`types`; lists of a schema's set or map type compare and concatenate
 *   as spec 03 says, see list_semantics.ts).
 * With `authorizer: true` an expression may also name `authorizer` (see {@link CelAuthorizer}).
 *
 * Values go in as JSON (integers may be bigint), or typed by {@link prepareValue} (timestamps,
 * durations, bytes and declared fields from a schema's type); results come out as plain JS
 * values (string, boolean, bigint for int, number for double, arrays, objects).
 *
 * Libraries: the standard library and strings extension; Kubernetes' lists (`isSorted`, `sum`,
 * `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`, `findAll`), URLs (`url`, `isURL`,
 * `getScheme`…), quantities (`quantity`, `isQuantity`, `isInteger`…), IPs and CIDRs (`ip`, `isIP`,
 * `cidr`, `containsIP`…), semantic versions (`semver`, `isSemver`, `major`…), named formats
 * (`format.dns1123Label().validate(s)`…), optionals (`optional.of`,
 * `hasValue`, `orValue`…, and the syntax `x.?f`, `x[?k]`, `{?k: v}`: optional_syntax.ts) and
 * authorizer. Properties
 * whose names are not identifiers are reached escaped: `claims.foo__dash__bar` reads `foo-bar`
 * (see escaping.ts).
 *
 * @example
 * ```ts
 * const rule = compile("claims", "claims.exp > 5 && has(claims.email)", { expect: "bool" });
 * rule.evaluate({ claims: { exp: 10, email: "a@b.c" } }); // true
 * ```
 */

import { celEnv, type CelInput, isCelError, parse, plan } from "@bufbuild/cel";
import { appendFunction, appendInPlace } from "./accumulate.ts";
import {
  type Expr,
  fieldsOf,
  identifiers,
  nodePosition,
  normalize,
  type ParsedExpr,
  positionAt,
  type SourceInfo,
  startPosition,
} from "./ast.ts";
import { check } from "./check.ts";
import { estimateCost } from "./estimate.ts";
import { listSemanticsFunctions, rewriteListSemantics } from "./list_semantics.ts";
import {
  type Desugared,
  desugarOptionalSyntax,
  restoreOptionalSyntax,
  rewriteOptionalChains,
} from "./optional_syntax.ts";
import { optional } from "./libraries/optional.ts";
import { net } from "./libraries/net.ts";
import { semver } from "./libraries/semver.ts";
import { format } from "./libraries/format.ts";
import type { Type } from "./types.ts";
import { costFunction, DEFAULT_COST_LIMIT, instrument, Meter, withMeter } from "./cost.ts";
import {
  AUTHORIZER_TYPE,
  AUTHORIZER_VARIABLE,
  type CelEnvironmentName,
  ENVIRONMENTS,
} from "./environments.ts";
import { CelCompileError, CelEvaluationError, ExprError } from "./errors.ts";
import { lazyJsonInput } from "./json_input.ts";
import { buildFunctions } from "./library.ts";
import { authorizerValue, authz, type CelAuthorizer } from "./libraries/authz.ts";
import { lists } from "./libraries/lists.ts";
import { quantity } from "./libraries/quantity.ts";
import { regex } from "./libraries/regex.ts";
import { urls } from "./libraries/urls.ts";
import {
  type CelResultKind,
  PreparedCelValue,
  resultTypeProblem,
  resultValue,
  toCelInput,
} from "./values.ts";

export { CelCompileError, CelEvaluationError, type CelPosition } from "./errors.ts";
export type { CelEnvironmentName } from "./environments.ts";
export type { CelResultKind } from "./values.ts";
export type { CelAuthorizer, CelAuthorizerAttributes } from "./libraries/authz.ts";
export { CEL_RESERVED_WORDS, escapePropertyName, unescapePropertyName } from "./escaping.ts";
export { DEFAULT_COST_LIMIT } from "./cost.ts";
export { type Prepared, prepareOptional, prepareValue } from "./typed_values.ts";
export { optionalOf } from "./libraries/optional.ts";
export { typeName } from "./types.ts";
export {
  BOOL,
  BYTES,
  DOUBLE,
  DURATION,
  DYN,
  INT,
  listOf,
  type ListSemantics,
  mapOf,
  object,
  STRING,
  TIMESTAMP,
  type Type,
} from "./types.ts";

export interface CompileOptions {
  /** The result type the expression must have; checked at compile time. */
  expect: CelResultKind;
  /** Runtime cost budget for one evaluation (default {@link DEFAULT_COST_LIMIT}). */
  costLimit?: number;
  /** Declares the `authorizer` variable; evaluations then need {@link EvaluateOptions.authorizer}. */
  authorizer?: boolean;
  /** Narrower types for some of the environment's variables (a policy's `object` typed from
   * the schema of the kind it matches, for type checking). */
  types?: Readonly<Record<string, Type>>;
}

export interface CompiledExpression {
  readonly expression: string;
  readonly environment: CelEnvironmentName;
  /** True when the expression mentions `claims.email_verified` (the email rule of spec 03). */
  usesClaim(name: string): boolean;
  /** Evaluates with the environment's variables; throws {@link CelEvaluationError}. */
  evaluate(variables: Record<string, unknown>, options?: EvaluateOptions): unknown;
}

/** What {@link compile} returns: also what the checker learnt, and metered evaluation. */
export interface CheckedExpression extends CompiledExpression {
  /** The static type of the result (dyn when it depends on the input). */
  readonly resultType: Type;
  /** The worst-case cost of one evaluation, from the types' sizes (see estimate.ts). */
  readonly estimatedCost: number;
  /** True when the expression names the variable (e.g. `oldSelf`). */
  usesVariable(name: string): boolean;
  /** As {@link evaluate}, also saying what the evaluation cost (the budget spent, when
   * successful or not: a failed evaluation throws a CelEvaluationError with `cost` set). */
  evaluateWithCost(
    variables: Record<string, unknown>,
    options?: EvaluateOptions,
  ): { value: unknown; cost: number };
}

export interface EvaluateOptions {
  /** Backs the authorizer library (`authorizer.group(…)…check(verb)`), when the use has one. */
  authorizer?: CelAuthorizer;
  /** A tighter budget for this evaluation than the compiled one (what is left of a larger
   * budget shared by several expressions). */
  costLimit?: number;
}

/** The most an expression charged its estimate (not metered) may be estimated to cost. */
const UNMETERED_COST_LIMIT = 10_000;

const FUNCTIONS = buildFunctions([
  lists,
  regex,
  urls,
  quantity,
  optional,
  net,
  semver,
  format,
  authz,
]);
const ENGINE = celEnv({
  funcs: [...FUNCTIONS.runtime, costFunction, appendFunction, ...listSemanticsFunctions],
});

/**
 * Parses and type-checks an expression for an environment; throws {@link CelCompileError} with
 * the position of the problem for syntax errors, undeclared names, calls no function accepts,
 * invalid literal regexes/quantities/URLs, and results that cannot have the expected type.
 */
export function compile(
  environment: CelEnvironmentName,
  expression: string,
  options: CompileOptions,
): CheckedExpression {
  if (options.costLimit !== undefined && !(options.costLimit > 0)) {
    throw new RangeError(`costLimit must be a positive number, not ${options.costLimit}`);
  }
  const declared = ENVIRONMENTS[environment];
  if (declared === undefined) throw new CelCompileError(`unknown CEL environment ${environment}`);
  const desugared = desugarOptionalSyntax(expression);
  const parsed = parseExpression(expression, desugared);
  const { expr, sourceInfo } = parsed;
  const variables = new Map(Object.entries(declared));
  if (options.authorizer) variables.set(AUTHORIZER_VARIABLE, AUTHORIZER_TYPE);
  for (const [name, type] of Object.entries(options.types ?? {})) {
    if (variables.has(name)) variables.set(name, type);
  }
  const nodeTypes = new Map<bigint, Type>();
  let type: Type;
  try {
    restoreOptionalSyntax(parsed, desugared);
    normalize(expr, (name) => FUNCTIONS.table.has(name));
    type = check(expr, {
      variables,
      functions: FUNCTIONS.table,
      literalChecks: FUNCTIONS.literalChecks,
      nodeTypes,
    });
    const problem = resultTypeProblem(type, options.expect);
    if (problem !== undefined) {
      throw new CelCompileError(problem, startPosition(expression, sourceInfo));
    }
  } catch (err) {
    if (!(err instanceof ExprError)) throw err;
    const position = nodePosition(expression, sourceInfo, err.exprId) ??
      startPosition(expression, sourceInfo);
    throw new CelCompileError(err.message, position);
  }
  rewriteListSemantics(expr, nodeTypes);
  rewriteOptionalChains(expr, nodeTypes);
  const estimate = estimateCost(expr, nodeTypes);
  return new Compiled(environment, expression, options, expr, sourceInfo, variables, {
    resultType: type,
    estimatedCost: estimate.cost,
    // Metering every node costs about a quarter of an evaluation: an expression whose cost
    // the types bound (and that is cheap) is charged its estimate instead.
    // Only where the estimate knows every function's cost (no authorizer checks).
    unmetered: environment === "crdRule" && estimate.bounded &&
      estimate.cost <= UNMETERED_COST_LIMIT,
  });
}

/**
 * `value` (JSON) as CEL input for several evaluations that bind it, each part converted when
 * an expression first reads it (otherwise each evaluation converts the variables it uses
 * again, whole). `name` names it in a conversion error, which fails the expression that reads
 * the part that is not JSON.
 */
export function preparedInput(value: unknown, name: string): PreparedCelValue {
  return new PreparedCelValue(lazyJsonInput(value, name));
}

/** Parses `desugared` (the expression with its optional syntax rewritten); a syntax error's
 * position is in `expression`. */
function parseExpression(expression: string, desugared: Desugared): ParsedExpr {
  try {
    return parse(desugared.text);
  } catch (err) {
    const at = (err as { location?: { start?: { offset?: number } } }).location?.start?.offset;
    const offset = at === undefined ? undefined : desugared.original[at] ?? at;
    // The parser prefixes "<input>:line:column: "; the position is reported separately.
    const message = (err as Error).message.replace(/^<input>:\d+:\d+: /, "");
    throw new CelCompileError(
      `syntax error: ${message}`,
      offset === undefined ? undefined : positionAt(expression, offset),
    );
  }
}

class Compiled implements CheckedExpression {
  readonly #program: ReturnType<typeof plan>;
  readonly #expect: CelResultKind;
  readonly #costLimit: number;
  readonly #sourceInfo: SourceInfo | undefined;
  /** The declared variables the expression names: only those are converted and bound. */
  readonly #variables: string[];
  readonly #claims: Set<string>;
  readonly #unmetered: boolean;
  readonly resultType: Type;
  readonly estimatedCost: number;

  constructor(
    readonly environment: CelEnvironmentName,
    readonly expression: string,
    options: CompileOptions,
    expr: Expr,
    sourceInfo: SourceInfo | undefined,
    declared: ReadonlyMap<string, unknown>,
    checked: { resultType: Type; estimatedCost: number; unmetered: boolean },
  ) {
    this.resultType = checked.resultType;
    this.estimatedCost = checked.estimatedCost;
    this.#unmetered = checked.unmetered;
    this.#expect = options.expect;
    this.#costLimit = options.costLimit ?? DEFAULT_COST_LIMIT;
    this.#sourceInfo = sourceInfo;
    this.#variables = [...identifiers(expr)].filter((name) => declared.has(name));
    this.#claims = environment === "claims" ? fieldsOf(expr, "claims") : new Set();
    appendInPlace(expr);
    this.#program = plan(ENGINE, this.#unmetered ? expr : instrument(expr));
  }

  usesClaim(name: string): boolean {
    return this.#claims.has(name);
  }

  usesVariable(name: string): boolean {
    return this.#variables.includes(name);
  }

  evaluate(variables: Record<string, unknown>, options: EvaluateOptions = {}): unknown {
    return this.evaluateWithCost(variables, options).value;
  }

  evaluateWithCost(
    variables: Record<string, unknown>,
    options: EvaluateOptions = {},
  ): { value: unknown; cost: number } {
    const bindings: Record<string, CelInput> = {};
    for (const name of this.#variables) {
      if (name === AUTHORIZER_VARIABLE) {
        if (options.authorizer === undefined) {
          throw new CelEvaluationError("the expression uses the authorizer, but none was given");
        }
        bindings[name] = authorizerValue(options.authorizer);
      } else if (variables[name] === undefined) {
        throw new CelEvaluationError(`variable ${name} is not set`);
      } else {
        bindings[name] = toCelInput(variables[name], name);
      }
    }
    const limit = Math.min(this.#costLimit, options.costLimit ?? Infinity);
    const meter = new Meter(limit);
    let result;
    if (this.#unmetered) {
      // Charged up front: what the types allow it to cost at most.
      meter.used = this.estimatedCost;
      result = meter.exceeded ? undefined : this.#program(bindings);
    } else {
      result = withMeter(meter, () => this.#program(bindings));
    }
    if (meter.exceeded) {
      throw new CelEvaluationError(
        `operation cancelled: evaluation cost exceeded the budget of ${limit}`,
        true,
        meter.used,
      );
    }
    if (result === undefined || isCelError(result)) {
      if (result === undefined) throw new CelEvaluationError("no result", false, meter.used);
      const at = result.exprId === undefined
        ? undefined
        : nodePosition(this.expression, this.#sourceInfo, result.exprId);
      const where = at ? ` (line ${at.line}, column ${at.column})` : "";
      throw new CelEvaluationError(`${result.message}${where}`, false, meter.used);
    }
    return { value: resultValue(result, this.#expect), cost: meter.used };
  }
}
