/**
 * Kubernetes' static token file (`--token-auth-file`): CSV lines
 * `token,user,uid,"group1,group2"`.
 *
 * - at least 3 columns (token, user name, uid); the 4th, optional, is a comma-separated list
 *   of groups (quote it when it has more than one group); further columns are ignored;
 * - fields may be double-quoted, with `""` for a quote inside; spaces before a field are
 *   ignored;
 * - blank lines and lines starting with `#` are skipped;
 * - an empty token or user name, an unterminated quote and a repeated token are errors.
 *
 * @module
 */

import { ConfigError, quote, readConfigFile } from "../config/mod.ts";

/** The user a static token authenticates as. */
export interface TokenUser {
  username: string;
  uid: string;
  groups: string[];
}

/**
 * Parse a token file's text. Errors name the file and line, e.g.
 * `tokens.csv:3: expected at least 3 columns (token,user,uid)`; they never quote a token.
 *
 * @throws {ConfigError}
 * @example
 * ```ts
 * parseTokenFile('abc,alice,1001,"dev,ops"\n', "tokens.csv").get("abc");
 * // {username: "alice", uid: "1001", groups: ["dev", "ops"]}
 * ```
 */
export function parseTokenFile(text: string, fileName: string): Map<string, TokenUser> {
  const out = new Map<string, TokenUser>();
  const firstLine = new Map<string, number>();
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  lines.forEach((line, i) => {
    const lineNo = i + 1;
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const fail = (message: string) => new ConfigError(`${fileName}:${lineNo}: ${message}`);
    const fields = splitCsvLine(line);
    if (typeof fields === "string") throw fail(fields);
    if (fields.length < 3) throw fail("expected at least 3 columns (token,user,uid)");
    const [token, username, uid] = fields;
    if (token === "") throw fail("empty token");
    if (/\s/.test(token)) throw fail("token contains white space");
    if (username === "") throw fail("empty user name");
    const seen = firstLine.get(token);
    if (seen !== undefined) throw fail(`duplicate token (first on line ${seen})`);
    firstLine.set(token, lineNo);
    const groups = (fields[3] ?? "").split(",").map((g) => g.trim()).filter((g) => g !== "");
    out.set(token, { username, uid, groups });
  });
  return out;
}

/**
 * Read and parse a token file. Messages name the path as given.
 *
 * @throws {ConfigError} `--token-auth-file: cannot read "x.csv": …` or a parse error.
 */
export async function loadTokenFile(path: string): Promise<Map<string, TokenUser>> {
  const text = await readConfigFile("--token-auth-file", path);
  return parseTokenFile(text, path);
}

/** The fields of one CSV line, or an error message. */
export function splitCsvLine(line: string): string[] | string {
  const fields: string[] = [];
  let i = 0;
  while (true) {
    while (line[i] === " " || line[i] === "\t") i++; // leading space of a field
    let field = "";
    if (line[i] === '"') {
      i++;
      while (true) {
        if (i >= line.length) return "unterminated quoted field";
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += line[i++];
      }
      while (line[i] === " " || line[i] === "\t") i++;
      if (i < line.length && line[i] !== ",") {
        return `unexpected ${quote(line[i])} after a quoted field`;
      }
    } else {
      const end = line.indexOf(",", i);
      field = (end === -1 ? line.slice(i) : line.slice(i, end)).trimEnd();
      if (field.includes('"')) return 'bare " in an unquoted field';
      i = end === -1 ? line.length : end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i++; // the comma
  }
}
