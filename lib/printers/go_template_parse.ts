/**
 * The parser of Go's text/template: actions, pipelines with `|`, variables (`$x := …`,
 * `$x = …`, `range $i, $e := …`), `if`/`else if`/`else`, `range`/`else`, `with`/`else`,
 * `break`/`continue`, `define`/`template`/`block`, parenthesized pipelines, literals and field
 * chains. Like Go it rejects undefined functions and variables at parse time, with Go's
 * messages (`function "upper" not defined`).
 *
 * Node positions and {@link nodeString} give Go's error context (`output:1:7` … `<.a.b>`):
 * a chain of fields such as `.a.b` sits at its second field, as in Go.
 *
 * @module
 */

import { type Item, lexTemplate, TemplateSyntaxError } from "./go_template_lex.ts";
import { unquoteExtended } from "./jsonpath_parse.ts";

export { TemplateSyntaxError } from "./go_template_lex.ts";

export type Arg =
  | { type: "field"; pos: number; idents: string[] }
  | { type: "variable"; pos: number; idents: string[] }
  | { type: "chain"; pos: number; node: Arg; fields: string[] }
  | { type: "identifier"; pos: number; name: string }
  | { type: "dot"; pos: number }
  | { type: "nil"; pos: number }
  | { type: "bool"; pos: number; value: boolean }
  | { type: "number"; pos: number; text: string; value: number; isFloat: boolean }
  | { type: "string"; pos: number; text: string; value: string }
  | Pipe;

export interface Command {
  type: "command";
  pos: number;
  args: Arg[];
}

export interface Pipe {
  type: "pipe";
  pos: number;
  isAssign: boolean;
  decl: string[];
  cmds: Command[];
}

export interface ListNode {
  type: "list";
  nodes: TemplateNode[];
}

export type TemplateNode =
  | ListNode
  | { type: "text"; pos: number; text: string }
  | { type: "action"; pos: number; pipe: Pipe }
  | ControlNode
  | { type: "template"; pos: number; name: string; pipe?: Pipe }
  | { type: "break" | "continue"; pos: number };

/** `if`, `with` or `range` with its body and optional else branch. */
export interface ControlNode {
  type: "if" | "with" | "range";
  pos: number;
  pipe: Pipe;
  list: ListNode;
  elseList?: ListNode;
}

/** The items a command can start with; anything else is "unexpected … in <context>". */
const STARTS_COMMAND = new Set<Item["type"]>([
  "bool",
  "char",
  "dot",
  "field",
  "identifier",
  "number",
  "nil",
  "rawString",
  "string",
  "variable",
  "leftParen",
]);

/** A parsed template set: the main template and those `define`d or `block`ed in it. */
export type Templates = Map<string, ListNode>;

/**
 * Parses `text` as the template `name`; `funcs` are the names of the functions in scope.
 * @throws {TemplateSyntaxError} with Go's message and line.
 */
export function parseTemplate(name: string, text: string, funcs: Set<string>): Templates {
  const parser = new Parser(lexTemplate(text), funcs);
  const templates: Templates = new Map();
  const main = parser.parseList(templates, true);
  if (!templates.has(name) || main.nodes.some((n) => n.type !== "text" || n.text.trim() !== "")) {
    templates.set(name, main);
  }
  return templates;
}

class Parser {
  private i = 0;
  private vars: string[] = ["$"];
  private rangeDepth = 0;

  constructor(private readonly items: Item[], private readonly funcs: Set<string>) {}

  private peek(): Item {
    return this.items[this.i];
  }
  private next(): Item {
    const it = this.items[this.i++];
    if (it.type === "error") throw new TemplateSyntaxError(it.value, it.line);
    return it;
  }
  private nextNonSpace(): Item {
    let it = this.next();
    while (it.type === "space") it = this.next();
    return it;
  }
  private peekNonSpace(): Item {
    let at = this.i;
    while (this.items[at].type === "space") at++;
    return this.items[at];
  }
  private fail(message: string, item = this.items[Math.max(this.i - 1, 0)]): never {
    // A lexing error stands for itself wherever the parser meets it.
    if (item?.type === "error") throw new TemplateSyntaxError(item.value, item.line);
    throw new TemplateSyntaxError(message, item.line);
  }

  /**
   * Nodes up to `{{end}}`/`{{else}}` (returned as the stop word) or, at top level, EOF.
   */
  parseList(templates: Templates, top: boolean): ListNode & { stop?: string; stopItem?: Item } {
    const list: ListNode & { stop?: string; stopItem?: Item } = { type: "list", nodes: [] };
    for (;;) {
      const it = this.next();
      if (it.type === "eof") {
        if (!top) this.fail("unexpected EOF", it);
        return list;
      }
      if (it.type === "text") {
        list.nodes.push({ type: "text", pos: it.pos, text: it.value });
        continue;
      }
      // leftDelim
      const word = this.peekNonSpace();
      if (word.type === "keyword") {
        switch (word.value) {
          case "end":
          case "else": {
            this.nextNonSpace();
            // The action is closed first (`{{else if …}}` excepted), as Go does.
            const next = this.peekNonSpace();
            const elseIf = word.value === "else" && next.type === "keyword" &&
              (next.value === "if" || next.value === "with");
            if (!elseIf) this.expect("rightDelim", word.value);
            if (top) this.fail(`unexpected {{${word.value}}}`, word);
            list.stop = word.value;
            list.stopItem = word;
            return list;
          }
          case "define":
            if (!top) this.fail("unexpected <define> in command", word);
            this.nextNonSpace();
            this.parseDefine(templates);
            continue;
        }
      }
      list.nodes.push(this.action(templates));
    }
  }

  private parseDefine(templates: Templates): void {
    const nameItem = this.nextNonSpace();
    const name = this.templateName(nameItem, "define clause");
    this.expect("rightDelim", "define clause");
    const saved = this.vars;
    this.vars = ["$"];
    const body = this.parseList(templates, false);
    if (body.stop !== "end") this.fail("unexpected {{else}}", body.stopItem);
    this.vars = saved;
    templates.set(name, { type: "list", nodes: body.nodes });
  }

  private action(templates: Templates): TemplateNode {
    const it = this.nextNonSpace();
    if (it.type === "keyword") {
      switch (it.value) {
        case "if":
        case "with":
        case "range":
          return this.control(it, templates);
        case "template":
        case "block":
          return this.templateCall(it, templates);
        case "break":
        case "continue":
          if (this.rangeDepth === 0) this.fail(`{{${it.value}}} outside {{range}}`, it);
          this.expect("rightDelim", it.value);
          return { type: it.value, pos: it.pos };
      }
      this.fail(`unexpected <${it.value}> in command`, it);
    }
    this.i--;
    const pipe = this.pipeline("command", "rightDelim");
    return { type: "action", pos: pipe.pos, pipe };
  }

  private control(it: Item, templates: Templates): TemplateNode {
    const kind = it.value as "if" | "with" | "range";
    const mark = this.vars.length;
    const pipe = this.pipeline(kind, "rightDelim");
    if (kind === "range") this.rangeDepth++;
    const body = this.parseList(templates, false);
    if (kind === "range") this.rangeDepth--;
    let elseList: ListNode | undefined;
    if (body.stop === "else") {
      // `{{else if …}}` / `{{else with …}}` nest a control in the else branch.
      const next = this.peekNonSpace();
      if ((kind === "if" && next.value === "if") || (kind === "with" && next.value === "with")) {
        this.nextNonSpace();
        const nested = this.control(next, templates);
        elseList = { type: "list", nodes: [nested] };
        this.vars.length = mark;
        return {
          type: kind,
          pos: pipe.pos,
          pipe,
          list: { type: "list", nodes: body.nodes },
          elseList,
        };
      }
      const rest = this.parseList(templates, false);
      if (rest.stop !== "end") this.fail("expected end; found {{else}}", rest.stopItem);
      elseList = { type: "list", nodes: rest.nodes };
    }
    this.vars.length = mark;
    return { type: kind, pos: pipe.pos, pipe, list: { type: "list", nodes: body.nodes }, elseList };
  }

  private templateCall(it: Item, templates: Templates): TemplateNode {
    const context = it.value === "block" ? "block clause" : "template clause";
    const nameItem = this.nextNonSpace();
    const name = this.templateName(nameItem, context);
    let pipe: Pipe | undefined;
    if (this.peekNonSpace().type !== "rightDelim") pipe = this.pipeline(context, "rightDelim");
    else this.nextNonSpace();
    if (it.value === "block") {
      const saved = this.vars;
      this.vars = ["$"];
      const body = this.parseList(templates, false);
      if (body.stop !== "end") this.fail("unexpected {{else}}", body.stopItem);
      this.vars = saved;
      templates.set(name, { type: "list", nodes: body.nodes });
    }
    return { type: "template", pos: nameItem.pos, name, pipe };
  }

  private templateName(item: Item, context: string): string {
    if (item.type === "string" || item.type === "rawString") {
      return stringValue(item, (m) => this.fail(m, item));
    }
    this.fail(`unexpected ${describe(item)} in ${context}`, item);
  }

  private expect(type: Item["type"], context: string): Item {
    const it = this.nextNonSpace();
    if (it.type !== type) this.fail(`unexpected ${describe(it)} in ${context}`, it);
    return it;
  }

  private pipeline(context: string, end: "rightDelim" | "rightParen"): Pipe {
    const start = this.peekNonSpace();
    const pipe: Pipe = { type: "pipe", pos: start.pos, isAssign: false, decl: [], cmds: [] };
    // Declarations: `$x :=`, `$x =`, `$i, $e :=` (range only).
    const at = this.i;
    const v = this.nextNonSpace();
    if (v.type === "variable") {
      const after = this.peekNonSpace();
      if (after.type === "declare" || after.type === "assign") {
        this.nextNonSpace();
        pipe.isAssign = after.type === "assign";
        pipe.decl.push(v.value);
        if (!pipe.isAssign) this.vars.push(v.value);
        else if (!this.vars.includes(v.value)) this.fail(`undefined variable "${v.value}"`, v);
      } else if (after.type === "comma" && context === "range") {
        this.nextNonSpace();
        const second = this.nextNonSpace();
        const op = this.nextNonSpace();
        if (second.type !== "variable" || (op.type !== "declare" && op.type !== "assign")) {
          this.fail("range can only initialize variables", second);
        }
        pipe.isAssign = op.type === "assign";
        pipe.decl.push(v.value, second.value);
        if (!pipe.isAssign) this.vars.push(v.value, second.value);
      } else this.i = at;
    } else this.i = at;

    for (;;) {
      const it = this.peekNonSpace();
      if (it.type === end) {
        this.nextNonSpace();
        if (pipe.cmds.length === 0) this.fail(`missing value for ${context}`, it);
        // Only the first command may start with a value that is not a function or field.
        pipe.cmds.slice(1).forEach((c, i) => {
          if (["bool", "dot", "nil", "number", "string"].includes(c.args[0].type)) {
            this.fail(`non executable command in pipeline stage ${i + 2}`, it);
          }
        });
        return pipe;
      }
      if (!STARTS_COMMAND.has(it.type)) this.fail(`unexpected ${describe(it)} in ${context}`, it);
      pipe.cmds.push(this.command(end));
    }
  }

  private command(end: "rightDelim" | "rightParen"): Command {
    const cmd: Command = { type: "command", pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      const it = this.peekNonSpace();
      if (it.type === end) break;
      if (it.type === "pipe") {
        this.nextNonSpace();
        break;
      }
      if (it.type === "eof") this.fail("unclosed action", it);
      // Operands are separated by spaces (or follow a parenthesis).
      const operand = this.operand();
      if (!operand) this.fail(`unexpected ${describe(it)} in operand`, it);
      cmd.args.push(operand);
      const after = this.peek();
      if (
        after.type !== "space" && after.type !== end && after.type !== "pipe" &&
        after.type !== "rightParen"
      ) {
        this.fail(`unexpected ${describe(after)} in operand`, after);
      }
    }
    if (cmd.args.length === 0) this.fail("missing value for command", this.peek());
    return cmd;
  }

  private operand(): Arg | undefined {
    const node = this.term();
    if (!node) return undefined;
    if (this.peek().type !== "field") return node;
    const pos = this.peek().pos;
    const fields: string[] = [];
    while (this.peek().type === "field") fields.push(this.next().value.slice(1));
    switch (node.type) {
      case "field":
        return { type: "field", pos, idents: [...node.idents, ...fields] };
      case "variable":
        return { type: "variable", pos, idents: [...node.idents, ...fields] };
      case "bool":
      case "string":
      case "number":
      case "nil":
      case "dot":
        this.fail(`unexpected . after term "${argString(node)}"`);
    }
    return { type: "chain", pos, node, fields };
  }

  private term(): Arg | undefined {
    const it = this.nextNonSpace();
    switch (it.type) {
      case "identifier":
        if (!this.funcs.has(it.value)) this.fail(`function "${it.value}" not defined`, it);
        return { type: "identifier", pos: it.pos, name: it.value };
      case "dot":
        return { type: "dot", pos: it.pos };
      case "nil":
        return { type: "nil", pos: it.pos };
      case "variable": {
        if (!this.vars.includes(it.value)) this.fail(`undefined variable "${it.value}"`, it);
        return { type: "variable", pos: it.pos, idents: [it.value] };
      }
      case "field":
        return { type: "field", pos: it.pos, idents: [it.value.slice(1)] };
      case "bool":
        return { type: "bool", pos: it.pos, value: it.value === "true" };
      case "char":
      case "number":
        return numberNode(it, (m) => this.fail(m, it));
      case "leftParen": {
        const pipe = this.pipeline("parenthesized pipeline", "rightParen");
        return { ...pipe, pos: it.pos };
      }
      case "string":
      case "rawString":
        return {
          type: "string",
          pos: it.pos,
          text: it.value,
          value: stringValue(it, (m) => this.fail(m, it)),
        };
    }
    this.i--;
    return undefined;
  }
}

function stringValue(item: Item, fail: (m: string) => never): string {
  if (item.type === "rawString") return item.value.slice(1, -1).replaceAll("\r", "");
  const v = unquoteExtended(item.value);
  if (v === undefined) fail("invalid syntax");
  return v;
}

function numberNode(item: Item, fail: (m: string) => never): Arg {
  const text = item.value;
  if (item.type === "char") {
    const v = unquoteExtended(text.replace(/^'|'$/g, '"').replace(/\\'/g, "'"));
    if (v === undefined || Array.from(v).length !== 1) {
      fail(`malformed character constant: ${text}`);
    }
    return { type: "number", pos: item.pos, text, value: v.codePointAt(0)!, isFloat: false };
  }
  const clean = text.replaceAll("_", "");
  const sign = clean.startsWith("-") ? -1 : 1;
  const unsigned = clean.replace(/^[+-]/, "");
  let value: number;
  let isFloat = false;
  if (/^0[xX][0-9a-fA-F]+$/.test(unsigned)) value = parseInt(unsigned.slice(2), 16);
  else if (/^0[bB][01]+$/.test(unsigned)) value = parseInt(unsigned.slice(2), 2);
  else if (/^0[oO]?[0-7]+$/.test(unsigned)) {
    value = parseInt(unsigned.replace(/^0[oO]?/, "") || "0", 8);
  } else if (/^\d+$/.test(unsigned)) value = Number(unsigned);
  else if (/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(unsigned)) {
    value = Number(unsigned);
    isFloat = true;
  } else fail(`illegal number syntax: "${text}"`);
  return { type: "number", pos: item.pos, text, value: sign * value, isFloat };
}

function describe(item: Item): string {
  switch (item.type) {
    case "eof":
      return "EOF";
    case "rightDelim":
      return '"}}"';
    case "leftDelim":
      return '"{{"';
    case "keyword":
      return `<${item.value}>`;
    case "space":
      return "space";
  }
  return `"${item.value}"`;
}

/** Go's `String()` of an argument node. */
export function argString(a: Arg): string {
  switch (a.type) {
    case "field":
      return a.idents.map((i) => `.${i}`).join("");
    case "variable":
      return a.idents[0] + a.idents.slice(1).map((i) => `.${i}`).join("");
    case "chain":
      return (a.node.type === "pipe" ? `(${pipeString(a.node)})` : argString(a.node)) +
        a.fields.map((f) => `.${f}`).join("");
    case "identifier":
      return a.name;
    case "dot":
      return ".";
    case "nil":
      return "nil";
    case "bool":
      return String(a.value);
    case "number":
    case "string":
      return a.text;
    case "pipe":
      return pipeString(a);
  }
}

export function commandString(c: Command): string {
  return c.args.map((a) => (a.type === "pipe" ? `(${pipeString(a)})` : argString(a))).join(" ");
}

export function pipeString(p: Pipe): string {
  const decl = p.decl.length ? `${p.decl.join(", ")} ${p.isAssign ? "=" : ":="} ` : "";
  return decl + p.cmds.map(commandString).join(" | ");
}

/** Go's `String()` of the nodes errors can be reported at. */
export function nodeString(n: TemplateNode | Arg | Command): string {
  switch (n.type) {
    case "command":
      return commandString(n);
    case "action":
      return `{{${pipeString(n.pipe)}}}`;
    case "template":
      return `{{template ${JSON.stringify(n.name)}${n.pipe ? " " + pipeString(n.pipe) : ""}}}`;
    case "if":
    case "with":
    case "range":
      return `{{${n.type} ${pipeString(n.pipe)}}}`;
    case "text":
    case "list":
    case "break":
    case "continue":
      return n.type;
  }
  return argString(n);
}
