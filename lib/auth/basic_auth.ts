/**
 * Basic credentials (`--basic-auth-file`, off without it): kube's old password file, CSV lines
 * `password,user,uid,"group1,group2"` (the same syntax as the static token file), checked
 * against `Authorization: Basic base64(user:password)`. For clients that sign in with a user
 * name and password; a bearer token or certificate is the better choice.
 *
 * @module
 */

import { timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import type { UserInfo } from "../api/mod.ts";
import { ConfigError, quote, readConfigFile } from "../config/mod.ts";
import type { Authenticator } from "./authenticator.ts";
import { splitCsvLine } from "./token_file.ts";

/** One user of the file. */
export interface BasicUser {
  password: string;
  user: UserInfo;
}

/**
 * Parses a password file's text. Errors name the file and line and never quote a password.
 *
 * @throws {ConfigError} e.g. `users.csv:2: duplicate user "alice" (first on line 1)`.
 */
export function parseBasicAuthFile(text: string, fileName: string): Map<string, BasicUser> {
  const out = new Map<string, BasicUser>();
  const firstLine = new Map<string, number>();
  text.replace(/^\uFEFF/, "").split(/\r?\n/).forEach((line, i) => {
    const lineNo = i + 1;
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const fail = (message: string) => new ConfigError(`${fileName}:${lineNo}: ${message}`);
    const fields = splitCsvLine(line);
    if (typeof fields === "string") throw fail(fields);
    if (fields.length < 3) throw fail("expected at least 3 columns (password,user,uid)");
    const [password, username, uid] = fields;
    if (password === "") throw fail("empty password");
    if (username === "") throw fail("empty user name");
    const seen = firstLine.get(username);
    if (seen !== undefined) throw fail(`duplicate user ${quote(username)} (first on line ${seen})`);
    firstLine.set(username, lineNo);
    const groups = (fields[3] ?? "").split(",").map((g) => g.trim()).filter((g) => g !== "");
    if (!groups.includes("system:authenticated")) groups.push("system:authenticated");
    out.set(username, { password, user: Object.freeze({ username, uid, groups }) as UserInfo });
  });
  return out;
}

/**
 * Reads and parses a password file.
 *
 * @throws {ConfigError} `--basic-auth-file: cannot read "x.csv": …` or a parse error.
 */
export async function loadBasicAuthFile(path: string): Promise<Map<string, BasicUser>> {
  const text = await readConfigFile("--basic-auth-file", path);
  return parseBasicAuthFile(text, path);
}

/** The user of an `Authorization: Basic` header whose password matches. */
export function basicAuthenticator(users: Map<string, BasicUser>): Authenticator {
  return {
    authenticate(req) {
      const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.get("Authorization") ?? "");
      if (!m) return undefined;
      let decoded: string;
      try {
        decoded = new TextDecoder().decode(Uint8Array.from(atob(m[1]), (c) => c.charCodeAt(0)));
      } catch {
        return undefined;
      }
      const colon = decoded.indexOf(":");
      if (colon < 0) return undefined;
      const entry = users.get(decoded.slice(0, colon));
      if (!entry) return undefined;
      const given = Buffer.from(decoded.slice(colon + 1));
      const want = Buffer.from(entry.password);
      return given.length === want.length && timingSafeEqual(given, want) ? entry.user : undefined;
    },
  };
}
