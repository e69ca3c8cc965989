/**
 * Authentication: who is making a request. Authenticators are tried in a fixed order; the
 * first that recognises the credential decides: client certificates when they are on
 * (`x509.ts`), bearer tokens (the generated admin token and `--token-auth-file`), service
 * account tokens.
 */

import type { UserInfo } from "../server/context.ts";

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
  return {
    authenticate(req) {
      const token = bearerToken(req);
      if (!token) return undefined;
      const user = tokens.get(token);
      if (!user) return undefined;
      // Every authenticated user is in system:authenticated, as kube adds it.
      const groups = user.groups.includes("system:authenticated")
        ? user.groups
        : [...user.groups, "system:authenticated"];
      return { ...user, groups };
    },
  };
}

export function unionAuthenticator(list: Authenticator[]): Authenticator {
  return {
    async authenticate(req) {
      for (const a of list) {
        const user = await a.authenticate(req);
        if (user) return user;
      }
      return undefined;
    },
  };
}
