/**
 * The executor of Go's text/template, following Go's evaluation step by step where kubectl users
 * can see it: missing map keys (`<no value>`, or `map has no entry for key "x"` with
 * `missingkey=error`), a pipeline's nil result printing `<no value>`, `range` over arrays and
 * over maps in key order, variable scopes, `break`/`continue`, and Go's error text
 * `template: output:1:7: executing "output" at <.a.b>: …` whose position and context name the
 * node Go was at.
 *
 * @module
 */

import { FuncError, type ParamKind, TEMPLATE_FUNCS, truth } from "./go_template_funcs.ts";
import {
  type Arg,
  type Command,
  type ControlNode,
  nodeString,
  type Pipe,
  type TemplateNode,
  type Templates,
} from "./go_template_parse.ts";
import { GoFloat, GoInt, goPrint, goTypeName, NO_VALUE, sortedKeys } from "./go_value.ts";

/** A failure while executing; `message` is Go's whole text (`template: …`). */
export class TemplateExecError extends Error {
  override name = "TemplateExecError";
}

export interface ExecOptions {
  /** `missingkey=error` (kubectl's `--allow-missing-template-keys=false`). */
  missingKeyError: boolean;
}

/** What was written, and the error that stopped execution if any (Go writes as it goes). */
export interface ExecResult {
  output: string;
  error?: TemplateExecError;
}

/** Go's `missingVal`: no previous command in the pipeline (unlike a previous result of no value). */
const NO_FINAL = Symbol("no final value");

class Break {}
class Continue {}

/** The depth of nested `{{template}}` calls we allow (Go allows 100000 but has a larger stack). */
const MAX_DEPTH = 1000;

export function executeTemplate(
  templates: Templates,
  name: string,
  text: string,
  data: unknown,
  opts: ExecOptions,
): ExecResult {
  const state = new State(templates, name, text, opts);
  const main = templates.get(name);
  try {
    if (!main) state.errorf(`"${name}" is an incomplete or empty template`);
    state.vars = [{ name: "$", value: data }];
    state.walk(data, main!);
  } catch (e) {
    if (e instanceof TemplateExecError) return { output: state.out, error: e };
    throw e;
  }
  return { output: state.out };
}

type Node = TemplateNode | Arg | Command;

class State {
  out = "";
  vars: { name: string; value: unknown; iface?: boolean }[] = [];
  /**
   * Whether dot is held as an `interface{}` (an element of a range) rather than as the concrete
   * value a pipeline gives: Go names that type in "can't evaluate field" errors.
   */
  private dotIface = false;
  private node: Node | undefined;
  private depth = 0;

  constructor(
    private readonly templates: Templates,
    private tmplName: string,
    private readonly text: string,
    private readonly opts: ExecOptions,
  ) {}

  private at(node: Node): void {
    this.node = node;
  }

  errorf(message: string): never {
    if (!this.node) throw new TemplateExecError(`template: ${this.tmplName}: ${message}`);
    const pos = "pos" in this.node ? this.node.pos : 0;
    const before = this.text.slice(0, pos);
    const nl = before.lastIndexOf("\n");
    const line = 1 + before.split("\n").length - 1;
    const col = new TextEncoder().encode(nl < 0 ? before : before.slice(nl + 1)).length;
    throw new TemplateExecError(
      `template: output:${line}:${col}: executing "${this.tmplName}" at <${
        nodeString(this.node)
      }>: ${message}`,
    );
  }

  walk(dot: unknown, node: TemplateNode): void {
    this.at(node);
    switch (node.type) {
      case "list":
        for (const n of node.nodes) this.walk(dot, n);
        return;
      case "text":
        this.out += node.text;
        return;
      case "action": {
        const val = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, val);
        return;
      }
      case "if":
      case "with":
        return this.walkIfOrWith(dot, node);
      case "range":
        return this.walkRange(dot, node);
      case "template":
        return this.walkTemplate(dot, node);
      case "break":
        throw new Break();
      case "continue":
        throw new Continue();
    }
  }

  private walkIfOrWith(dot: unknown, node: ControlNode): void {
    const mark = this.vars.length;
    try {
      const val = this.evalPipeline(dot, node.pipe);
      if (truth(val)) {
        if (node.type === "with") this.withDot(false, () => this.walk(val, node.list));
        else this.walk(dot, node.list);
      } else if (node.elseList) this.walk(dot, node.elseList);
    } finally {
      this.vars.length = mark;
    }
  }

  private withDot(iface: boolean, fn: () => void): void {
    const saved = this.dotIface;
    this.dotIface = iface;
    try {
      fn();
    } finally {
      this.dotIface = saved;
    }
  }

  private walkRange(dot: unknown, node: ControlNode): void {
    this.at(node);
    const mark = this.vars.length;
    try {
      const val = this.evalPipeline(dot, node.pipe);
      const bodyMark = this.vars.length;
      const one = (index: unknown, elem: unknown): boolean => {
        const decl = node.pipe.decl;
        if (decl.length > 0) {
          this.setVar(decl.length > 1 ? decl[1] : decl[0], elem, node.pipe.isAssign, 1, true);
        }
        if (decl.length > 1) this.setVar(decl[0], index, node.pipe.isAssign, 2);
        try {
          this.withDot(true, () => this.walk(elem, node.list));
        } catch (e) {
          if (e instanceof Break) return false;
          if (!(e instanceof Continue)) throw e;
        } finally {
          this.vars.length = bodyMark;
        }
        return true;
      };
      let ran = false;
      if (Array.isArray(val)) {
        for (let i = 0; i < val.length; i++) {
          ran = true;
          if (!one(new GoInt(i), val[i])) break;
        }
      } else if (
        val !== null && typeof val === "object" && !(val instanceof GoInt) &&
        !(val instanceof GoFloat)
      ) {
        const map = val as Record<string, unknown>;
        for (const k of sortedKeys(map)) {
          ran = true;
          if (!one(k, map[k])) break;
        }
      } else if (val !== NO_VALUE && val !== null) {
        this.errorf(`range can't iterate over ${goPrint(val)}`);
      }
      if (!ran && node.elseList) this.walk(dot, node.elseList);
    } finally {
      this.vars.length = mark;
    }
  }

  private walkTemplate(dot: unknown, node: Extract<TemplateNode, { type: "template" }>): void {
    this.at(node);
    const tmpl = this.templates.get(node.name);
    if (!tmpl) this.errorf(`template "${node.name}" not defined`);
    if (this.depth >= MAX_DEPTH) this.errorf(`exceeded maximum template depth (${MAX_DEPTH})`);
    const newDot = node.pipe ? this.evalPipeline(dot, node.pipe) : null;
    const saved = { vars: this.vars, name: this.tmplName };
    this.depth++;
    this.tmplName = node.name;
    this.vars = [{ name: "$", value: newDot }];
    try {
      this.withDot(false, () => this.walk(newDot, tmpl!));
    } finally {
      this.depth--;
      this.vars = saved.vars;
      this.tmplName = saved.name;
    }
  }

  /** `range` sets the last (or next-to-last) pushed variable, or assigns with `=`. */
  private setVar(
    name: string,
    value: unknown,
    assign: boolean,
    fromTop: number,
    iface = false,
  ): void {
    if (assign) {
      for (let i = this.vars.length - 1; i >= 0; i--) {
        if (this.vars[i].name === name) {
          this.vars[i] = { name, value, iface };
          return;
        }
      }
    }
    this.vars[this.vars.length - fromTop] = { name, value, iface };
  }

  private variable(name: string): { value: unknown; iface?: boolean } {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i].name === name) return this.vars[i];
    }
    this.errorf(`undefined variable: ${name}`);
  }

  private evalPipeline(dot: unknown, pipe: Pipe): unknown {
    this.at(pipe);
    let value: unknown = NO_FINAL;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      // A nil interface{} is dug into: it becomes "no value".
      if (value === null) value = NO_VALUE;
    }
    for (const name of pipe.decl) {
      if (pipe.isAssign) this.setVar(name, value, true, 1);
      else this.vars.push({ name, value });
    }
    return value;
  }

  private evalCommand(dot: unknown, cmd: Command, final: unknown): unknown {
    const first = cmd.args[0];
    switch (first.type) {
      case "field":
        return this.evalFieldNode(dot, first, cmd.args, final);
      case "chain":
        return this.evalChain(dot, first, cmd.args, final);
      case "identifier":
        return this.evalFunction(dot, first, cmd, cmd.args, final);
      case "pipe":
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case "variable":
        return this.evalVariable(first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case "bool":
        return first.value;
      case "dot":
        return dot;
      case "nil":
        this.errorf("nil is not a command");
        break;
      case "number":
        return constant(first);
      case "string":
        return first.value;
    }
    this.errorf(`can't evaluate command ${nodeString(first)}`);
  }

  private notAFunction(args: Arg[], final: unknown): void {
    if (args.length > 1 || final !== NO_FINAL) {
      this.errorf(`can't give argument to non-function ${nodeString(args[0])}`);
    }
  }

  private evalFieldNode(
    dot: unknown,
    field: Extract<Arg, { type: "field" }>,
    args: Arg[],
    final: unknown,
  ): unknown {
    this.at(field);
    return this.evalFieldChain(dot, this.dotIface, field.idents, args, final);
  }

  private evalChain(
    dot: unknown,
    chain: Extract<Arg, { type: "chain" }>,
    args: Arg[],
    final: unknown,
  ): unknown {
    this.at(chain);
    if (chain.node.type === "nil") {
      this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    }
    const receiver = this.evalArg(dot, "value", chain.node);
    return this.evalFieldChain(receiver, false, chain.fields, args, final);
  }

  private evalVariable(
    v: Extract<Arg, { type: "variable" }>,
    args: Arg[],
    final: unknown,
  ): unknown {
    this.at(v);
    const { value, iface } = this.variable(v.idents[0]);
    if (v.idents.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(value, iface ?? false, v.idents.slice(1), args, final);
  }

  /** `iface`: whether the first receiver is held as an `interface{}` (later ones always are). */
  private evalFieldChain(
    receiver: unknown,
    iface: boolean,
    idents: string[],
    args: Arg[],
    final: unknown,
  ): unknown {
    for (let i = 0; i < idents.length - 1; i++) {
      receiver = this.evalField(idents[i], [], NO_FINAL, receiver, i === 0 ? iface : true);
    }
    return this.evalField(
      idents[idents.length - 1],
      args,
      final,
      receiver,
      idents.length === 1 ? iface : true,
    );
  }

  private evalField(
    name: string,
    args: Arg[],
    final: unknown,
    receiver: unknown,
    iface: boolean,
  ): unknown {
    if (receiver === NO_VALUE) {
      if (this.opts.missingKeyError) this.errorf(`nil data; no entry for key "${name}"`);
      return NO_VALUE;
    }
    if (receiver === null) this.errorf(`nil pointer evaluating interface {}.${name}`);
    const isMap = typeof receiver === "object" && !Array.isArray(receiver) &&
      !(receiver instanceof GoInt) &&
      !(receiver instanceof GoFloat);
    if (!isMap) {
      const type = iface ? "interface {}" : goTypeName(receiver);
      this.errorf(`can't evaluate field ${name} in type ${type}`);
    }
    if (args.length > 1 || final !== NO_FINAL) {
      this.errorf(`${name} is not a method but has arguments`);
    }
    const map = receiver as Record<string, unknown>;
    if (Object.hasOwn(map, name)) return map[name];
    if (this.opts.missingKeyError) this.errorf(`map has no entry for key "${name}"`);
    return NO_VALUE;
  }

  private evalFunction(
    dot: unknown,
    node: Extract<Arg, { type: "identifier" }>,
    cmd: Node,
    args: Arg[],
    final: unknown,
  ): unknown {
    this.at(node);
    const fn = TEMPLATE_FUNCS.get(node.name);
    if (!fn) this.errorf(`"${node.name}" is not a defined function`);
    const given = args.slice(1);
    const count = given.length + (final !== NO_FINAL ? 1 : 0);
    const fixed = fn.params.length;
    if (fn.variadic ? count < fixed : count !== fixed) {
      this.errorf(
        `wrong number of args for ${node.name}: want ${
          fn.variadic ? "at least " : ""
        }${fixed} got ${count}`,
      );
    }
    const kindAt = (i: number): ParamKind => (i < fixed ? fn.params[i] : fn.variadic!);
    if (node.name === "and" || node.name === "or") {
      let v: unknown = NO_VALUE;
      for (const a of given) {
        v = this.evalArg(dot, "value", a);
        if (truth(v) === (node.name === "or")) return v;
      }
      if (final !== NO_FINAL) v = final;
      return v;
    }
    const argv = given.map((a, i) => this.evalArg(dot, kindAt(i), a));
    if (final !== NO_FINAL) argv.push(this.validate(final, kindAt(argv.length)));
    try {
      return fn.call(argv);
    } catch (e) {
      if (!(e instanceof FuncError)) throw e;
      this.at(cmd);
      this.errorf(`error calling ${node.name}: ${e.message}`);
    }
  }

  private evalArg(dot: unknown, kind: ParamKind, n: Arg): unknown {
    this.at(n);
    switch (n.type) {
      case "dot":
        return this.validate(dot, kind);
      case "nil":
        if (kind === "string") this.errorf("cannot assign nil to string");
        return null;
      case "field":
        return this.validate(this.evalFieldNode(dot, n, [n], NO_FINAL), kind);
      case "variable":
        return this.validate(this.evalVariable(n, [n], NO_FINAL), kind);
      case "pipe":
        return this.validate(this.evalPipeline(dot, n), kind);
      case "identifier":
        return this.validate(this.evalFunction(dot, n, n, [n], NO_FINAL), kind);
      case "chain":
        return this.validate(this.evalChain(dot, n, [n], NO_FINAL), kind);
    }
    if (kind === "string") {
      if (n.type === "string") return n.value;
      this.errorf(`expected string; found ${nodeString(n)}`);
    }
    switch (n.type) {
      case "bool":
        return n.value;
      case "number":
        return constant(n);
      case "string":
        return n.value;
    }
  }

  private validate(value: unknown, kind: ParamKind): unknown {
    if (value === NO_VALUE) {
      if (kind === "any") return null;
      if (kind === "string") this.errorf("invalid value; expected string");
      return NO_VALUE;
    }
    if (kind === "string" && typeof value !== "string") {
      this.errorf(`wrong type for value; expected string; got ${goTypeName(value)}`);
    }
    return value;
  }

  private printValue(node: Node, v: unknown): void {
    this.at(node);
    this.out += v === NO_VALUE ? "<no value>" : goPrint(v);
  }
}

/** A number literal: Go's `int` unless it is written as a float (`1.0`, `1e6`). */
function constant(n: Extract<Arg, { type: "number" }>): unknown {
  return n.isFloat ? new GoFloat(n.value) : new GoInt(n.value);
}
