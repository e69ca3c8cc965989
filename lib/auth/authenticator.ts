/**
 * Authentication: who is making a request. Authenticators are tried in a fixed order; the
 * first that recognises the credential decides: client certificates when they are on
 * (`x509.ts`), bearer tokens (the generated admin token and `--token-auth-file`), service
 * account tokens.
 */

import type { UserInfo } from "../api/mod.ts";

export interface Authenticator {
  /** The user, `undefined` when this authenticator does not recognise the credential. */
  authenticate(req: Request): UserInfo | undefined | Promise<UserInfo | undefined>;
}

/** The token of an `Authorization: Bearer <token>` header, if the request has one. */
export function bearerToken(req: Request): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.get("Authorization") ?? "")?.[1];
}

/** Bearer tokens from a fixed table (token -> user). */
export function tokenAuthenticator(tokens: Map<string, UserInfo>): Authenticator {
  // Each token's user is built once and shared by its requests, frozen so none can change it.
  const users = new Map<string, UserInfo>();
  for (const [token, user] of tokens) {
    // Every authenticated user is in system:authenticated, as kube adds it.
    const groups = user.groups.includes("system:authenticated")
      ? [...user.groups]
      : [...user.groups, "system:authenticated"];
    users.set(token, Object.freeze({ ...user, groups: Object.freeze(groups) as string[] }));
  }
  return {
    authenticate(req) {
      const token = bearerToken(req);
      return token ? users.get(token) : undefined;
    },
  };
}

/** Asks each authenticator in order; synchronous until one answers with a promise. */
export function unionAuthenticator(list: Authenticator[]): Authenticator {
  const from = (
    req: Request,
    i: number,
  ): UserInfo | undefined | Promise<UserInfo | undefined> => {
    for (; i < list.length; i++) {
      const user = list[i].authenticate(req);
      if (user instanceof Promise) {
        const next = i + 1;
        return user.then((u) => u ?? from(req, next));
      }
      if (user) return user;
    }
    return undefined;
  };
  return { authenticate: (req) => from(req, 0) };
}
