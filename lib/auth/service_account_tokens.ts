/**
 * Service account tokens: the JWTs that `serviceaccounts/{name}/token` (TokenRequest,
 * `kubectl create token`) issues, and the authenticator that accepts them.
 *
 * Tokens are ES256 JWTs signed with `<dataDir>/pki/service-account.key` (made on first
 * start), with kube's claims: `iss`, `sub` = `system:serviceaccount:<ns>:<name>`, `aud`,
 * `exp`/`iat`/`nbf`, `jti`, and `kubernetes.io` naming the namespace and the service account
 * (name and uid). A token authenticates only while its service account exists with the same
 * uid, so deleting the account revokes its tokens, as in kube.
 */

import { serviceAccountGroups, serviceAccountUsername } from "./service_account_names.ts";
import { decodeJwt, exportPKCS8, importPKCS8, jwtVerify, SignJWT } from "jose";
import { join } from "node:path";
import type { UserInfo } from "../api/mod.ts";
import { type Authenticator, bearerToken } from "./authenticator.ts";
import { writeFileAtomic } from "../storage/mod.ts";

/** The `iss` of the tokens we issue, and the default audience. */
export const SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";

const ALG = "ES256";
/** kube's default and minimum token lifetimes. */
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;
/** Clock skew allowed when checking `exp` and `nbf`. */
const LEEWAY_SECONDS = 60;

export interface TokenSubject {
  namespace: string;
  name: string;
  uid: string;
}

export interface IssuedToken {
  token: string;
  /** RFC 3339, as `status.expirationTimestamp` carries it. */
  expirationTimestamp: string;
}

export class ServiceAccountTokens {
  readonly issuer: string;
  #signingKey: CryptoKey;
  #verifyingKey: CryptoKey;

  private constructor(signingKey: CryptoKey, verifyingKey: CryptoKey, issuer: string) {
    this.#signingKey = signingKey;
    this.#verifyingKey = verifyingKey;
    this.issuer = issuer;
  }

  /** Reads the signing key from `<dataDir>/pki/service-account.key`, made on first use. */
  static async open(
    dataDir: string,
    issuer = SERVICE_ACCOUNT_ISSUER,
  ): Promise<ServiceAccountTokens> {
    const path = join(dataDir, "pki", "service-account.key");
    let pem: string | undefined;
    try {
      pem = await Deno.readTextFile(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    if (!pem) {
      const { privateKey } = await crypto.subtle.generateKey(
        { name: "ECDSA", namedCurve: "P-256" },
        true,
        ["sign", "verify"],
      );
      pem = await exportPKCS8(privateKey);
      await writeFileAtomic(path, pem, { mode: 0o600 });
    }
    const key = await importPKCS8(pem, ALG, { extractable: true });
    return new ServiceAccountTokens(key, await publicOf(key), issuer);
  }

  /** The audiences a token gets when the request names none. */
  get defaultAudiences(): string[] {
    return [this.issuer];
  }

  async issue(
    subject: TokenSubject,
    opts: { audiences: string[]; expirationSeconds: number; now?: Date },
  ): Promise<IssuedToken> {
    const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
    const exp = now + opts.expirationSeconds;
    const token = await new SignJWT({
      "kubernetes.io": {
        namespace: subject.namespace,
        serviceaccount: { name: subject.name, uid: subject.uid },
      },
    })
      .setProtectedHeader({ alg: ALG, typ: "JWT" })
      .setIssuer(this.issuer)
      .setSubject(serviceAccountUsername(subject.namespace, subject.name))
      .setAudience(opts.audiences)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(exp)
      .setJti(crypto.randomUUID())
      .sign(this.#signingKey);
    return {
      token,
      expirationTimestamp: new Date(exp * 1000).toISOString().replace(/\.\d+Z$/, "Z"),
    };
  }

  /**
   * Accepts bearer tokens we issued for one of `audiences` whose service account still exists
   * with the same uid (`lookup` gives the account's uid, undefined when it is gone).
   */
  authenticator(
    lookup: AccountLookup,
    audiences = this.defaultAudiences,
  ): Authenticator {
    return {
      authenticate: async (req) => {
        const token = bearerToken(req);
        // Only JWTs of our issuer are ours to look at; others (an OIDC issuer's) skip the
        // signature check, which costs far more than reading the claims.
        if (!token || !this.isOurs(token)) return undefined;
        return await this.verify(token, lookup, audiences);
      },
    };
  }

  /** Whether a token names us as its issuer (its signature is not checked). */
  isOurs(token: string): boolean {
    try {
      return decodeJwt(token).iss === this.issuer;
    } catch {
      return false;
    }
  }

  /** The user a token stands for, undefined when it is not a valid token of ours. */
  async verify(
    token: string,
    lookup: AccountLookup,
    audiences = this.defaultAudiences,
  ): Promise<UserInfo | undefined> {
    return (await this.review(token, lookup, audiences)).user;
  }

  /**
   * A token checked for a TokenReview: the user, and the token's audiences that are among
   * `audiences` (at least one must be); or why the token is not valid.
   */
  async review(
    token: string,
    lookup: AccountLookup,
    audiences: string[],
  ): Promise<{ user?: UserInfo; audiences: string[]; error?: string }> {
    const invalid = { audiences: [], error: "invalid bearer token" };
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.#verifyingKey, {
        issuer: this.issuer,
        algorithms: [ALG],
        clockTolerance: LEEWAY_SECONDS,
      }));
    } catch {
      return invalid;
    }
    const tokenAudiences = typeof payload.aud === "string" ? [payload.aud] : payload.aud ?? [];
    const shared = tokenAudiences.filter((a) => audiences.includes(a));
    if (!shared.length) {
      return {
        audiences: [],
        error: `token audiences ${goQuoted(tokenAudiences)} is invalid for the target audiences ${
          goQuoted(audiences)
        }`,
      };
    }
    const claim = payload["kubernetes.io"] as
      | { namespace?: string; serviceaccount?: { name?: string; uid?: string } }
      | undefined;
    const namespace = claim?.namespace;
    const name = claim?.serviceaccount?.name;
    const uid = claim?.serviceaccount?.uid;
    if (!namespace || !name || !uid) return invalid;
    if ((await lookup(namespace, name)) !== uid) return invalid;
    const extra: Record<string, string[]> = {};
    if (payload.jti) extra["authentication.kubernetes.io/credential-id"] = [`JTI=${payload.jti}`];
    const user = {
      username: serviceAccountUsername(namespace, name),
      uid,
      groups: [...serviceAccountGroups(namespace), "system:authenticated"],
      extra,
    };
    return { user, audiences: shared };
  }
}

/** The uid of a service account, undefined when it does not exist. */
export type AccountLookup = (namespace: string, name: string) => Promise<string | undefined>;

/** A list as Go's `%q` prints a string slice: `["a" "b"]`. */
export function goQuoted(list: string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(" ")}]`;
}

/** The public half of an EC private key (through a JWK without `d`). */
async function publicOf(privateKey: CryptoKey): Promise<CryptoKey> {
  const jwk = await crypto.subtle.exportKey("jwk", privateKey);
  delete jwk.d;
  jwk.key_ops = ["verify"];
  return await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, true, [
    "verify",
  ]);
}
