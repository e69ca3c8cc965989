/** The errors of the public API (re-exported by mod.ts) and the checker's internal one. */

/** Where in an expression an error is, 1-based line and column, 0-based offset. */
export interface CelPosition {
  line: number;
  column: number;
  offset: number;
}

/** An expression that does not compile or has the wrong result type. */
export class CelCompileError extends Error {
  constructor(message: string, readonly position?: CelPosition) {
    super(message);
    this.name = "CelCompileError";
  }
}

/** An evaluation that failed: a runtime error, a wrong result type, or the cost budget spent. */
export class CelEvaluationError extends Error {
  /** `cost`: what the evaluation spent before it failed, when it ran. */
  constructor(message: string, readonly costExceeded = false, readonly cost = 0) {
    super(message);
    this.name = "CelEvaluationError";
  }
}

/** A load-time problem at one node of the syntax tree; compile() turns it into a position. */
export class ExprError extends Error {
  constructor(message: string, readonly exprId: bigint) {
    super(message);
    this.name = "ExprError";
  }
}
