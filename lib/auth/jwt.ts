/**
 * The JWT authenticator of one `jwt[i]` entry of the authentication configuration: accepts
 * bearer tokens whose (unverified) `iss` is the entry's issuer URL, and ignores every other
 * token so the next authenticator can try it.
 *
 * A token for this issuer must pass everything or authentication fails (the request gets a
 * 401 without details; the reason is logged at debug level, never the token):
 * - signed by a key of the issuer's key set with an asymmetric algorithm (RS, PS, ES 256/384/
 *   512, kube's list; `none` and HMAC are refused);
 * - `iss` equal to the issuer URL, `aud` naming one of `audiences`, `exp` present and not
 *   passed, `nbf` (when present) reached, both with {@link CLOCK_SKEW_SECONDS} of leeway;
 *   `iat` is not checked, as in kube;
 * - every claim validation rule, then the claim mappings, then every user validation rule.
 *
 * The user: username (a string claim with its prefix, or a non-empty string expression; with
 * the `email` claim, `email_verified` must be true when present), groups (a string or list
 * claim with the prefix, or an expression; empty strings dropped), uid, extra (empty values
 * dropped, empty mappings absent), plus the group `system:authenticated`.
 *
 * @module
 */

import { decodeJwt, errors as joseErrors, jwtVerify } from "jose";
import type { Logger, UserInfo } from "../api/mod.ts";
import { CelEvaluationError, type CompiledExpression } from "../cel/mod.ts";
import { type Authenticator, bearerToken } from "./authenticator.ts";
import type {
  ClaimOrExpression,
  JwtAuthenticatorConfig,
  PrefixedClaimOrExpression,
} from "./authentication_config.ts";
import { OidcProvider, type OidcProviderOptions } from "./oidc_provider.ts";

/** Leeway for `exp` and `nbf` between our clock and the issuer's. */
export const CLOCK_SKEW_SECONDS = 10;

/** kube's accepted signing algorithms: asymmetric only. */
const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "ES256",
  "ES384",
  "ES512",
  "PS256",
  "PS384",
  "PS512",
];

/** Options of {@link JwtAuthenticator}: those of the issuer's discovery. */
export type JwtAuthenticatorOptions = OidcProviderOptions;

/** How long a verified token's user is reused without checking the signature again (kube's
 * token cache keeps successes as long), and how many such tokens are kept. */
const CACHE_TTL_MS = 10_000;
const CACHE_SIZE = 4096;

/** Claims of a verified token, as JSON. */
type Claims = Record<string, unknown>;

/** A token that is for this issuer but does not authenticate; the message is logged. */
class Rejected extends Error {}

export class JwtAuthenticator implements Authenticator {
  readonly config: JwtAuthenticatorConfig;
  readonly #provider: OidcProvider;
  readonly #log: Logger;
  /** Verified tokens: the user and until when it may be reused (insertion order = age). */
  readonly #verified = new Map<string, { user: UserInfo; until: number }>();

  /** Starts the issuer's discovery in the background. */
  constructor(config: JwtAuthenticatorConfig, opts: JwtAuthenticatorOptions) {
    this.config = config;
    this.#log = opts.logger;
    this.#provider = new OidcProvider(config.issuer, opts);
  }

  /** The user, or `undefined` for a token of another issuer or one that fails a check. */
  async authenticate(req: Request): Promise<UserInfo | undefined> {
    const token = bearerToken(req);
    if (!token) return undefined;
    const cached = this.#verified.get(token);
    if (cached && cached.until > Date.now()) return copyOf(cached.user);
    if (!this.#isForThisIssuer(token)) return undefined;
    try {
      const { user, expiresAt } = await this.#authenticate(token);
      this.#remember(token, user, expiresAt);
      return copyOf(user);
    } catch (err) {
      const expected = err instanceof Rejected || err instanceof joseErrors.JOSEError;
      // Unexpected failures (the key set unreachable, …) are worth more than a debug line.
      this.#log[expected ? "debug" : "warn"](
        `jwt authenticator ${this.config.issuer.url}: token rejected:`,
        err,
      );
      return undefined;
    }
  }

  /** Keeps a verified token's user for a few seconds, never past the token's expiry: a
   * signature check costs hundreds of microseconds, a lookup almost nothing. */
  #remember(token: string, user: UserInfo, expiresAt: number) {
    this.#verified.delete(token);
    if (this.#verified.size >= CACHE_SIZE) {
      this.#verified.delete(this.#verified.keys().next().value!);
    }
    this.#verified.set(token, { user, until: Math.min(Date.now() + CACHE_TTL_MS, expiresAt) });
  }

  /** Stops the issuer's discovery retries and closes its connections. */
  close(): void {
    this.#provider.close();
  }

  /** Whether the token's unverified `iss` is ours: only then is it this authenticator's. */
  #isForThisIssuer(token: string): boolean {
    try {
      return decodeJwt(token).iss === this.config.issuer.url;
    } catch {
      return false;
    }
  }

  async #authenticate(token: string): Promise<{ user: UserInfo; expiresAt: number }> {
    const { issuer } = this.config;
    const keys = await this.#provider.keys();
    if (!keys) throw new Rejected("the issuer's keys are not known yet (discovery pending)");
    const { payload } = await jwtVerify(token, keys, {
      issuer: issuer.url,
      audience: issuer.audiences,
      algorithms: ALGORITHMS,
      clockTolerance: CLOCK_SKEW_SECONDS,
      requiredClaims: ["exp"],
    });
    const claims = celJson(payload) as Claims;
    this.#checkClaims(claims);
    const user = this.#map(claims);
    this.#checkUser(user);
    user.groups.push("system:authenticated");
    return { user, expiresAt: (payload.exp ?? 0) * 1000 };
  }

  #checkClaims(claims: Claims) {
    for (const rule of this.config.claimValidationRules) {
      if ("claim" in rule) {
        const value = claimOf(claims, rule.claim);
        if (value === undefined) throw new Rejected(`required claim ${rule.claim} not present`);
        if (typeof value !== "string") {
          throw new Rejected(`required claim ${rule.claim} is not a string`);
        }
        if (value !== rule.requiredValue) {
          throw new Rejected(`required claim ${rule.claim} value does not match`);
        }
      } else if (evaluate(rule.expression, { claims }, "claim validation") !== true) {
        throw new Rejected(
          `claim validation expression ${JSON.stringify(rule.expression.expression)} failed` +
            (rule.message ? `: ${rule.message}` : ""),
        );
      }
    }
  }

  #map(claims: Claims): UserInfo {
    const m = this.config.claimMappings;
    const user: UserInfo = {
      username: username(m.username, claims),
      groups: m.groups ? groups(m.groups, claims) : [],
    };
    if (m.uid) user.uid = uid(m.uid, claims);
    const extra: Record<string, string[]> = {};
    for (const { key, valueExpression } of m.extra) {
      const values = stringList(evaluate(valueExpression, { claims }, `extra ${key}`));
      if (values === undefined) throw new Rejected(`extra ${key}: not a string or string list`);
      if (values.length > 0) extra[key] = values;
    }
    if (Object.keys(extra).length > 0) user.extra = extra;
    return user;
  }

  #checkUser(user: UserInfo) {
    const rules = this.config.userValidationRules;
    if (rules.length === 0) return;
    // The user as CEL sees it: every field present, as kube fills them in.
    const variables = {
      user: {
        username: user.username,
        uid: user.uid ?? "",
        groups: user.groups,
        extra: user.extra ?? {},
      },
    };
    for (const rule of rules) {
      if (evaluate(rule.expression, variables, "user validation") !== true) {
        throw new Rejected(
          `user validation expression ${JSON.stringify(rule.expression.expression)} failed` +
            (rule.message ? `: ${rule.message}` : ""),
        );
      }
    }
  }
}

function username(m: PrefixedClaimOrExpression, claims: Claims): string {
  let name: unknown;
  if ("claim" in m) {
    name = claimOf(claims, m.claim);
    if (typeof name !== "string") throw new Rejected(`username claim ${m.claim} is not a string`);
    // OpenID: an email is only an identity when the issuer verified it.
    if (
      m.claim === "email" && Object.hasOwn(claims, "email_verified") &&
      claims.email_verified !== true
    ) {
      throw new Rejected("email not verified");
    }
    name = m.prefix + name;
  } else {
    name = evaluate(m.expression, { claims }, "username");
    if (typeof name !== "string") throw new Rejected("username expression must return a string");
  }
  if (name === "") throw new Rejected("empty username");
  return name as string;
}

function groups(m: PrefixedClaimOrExpression, claims: Claims): string[] {
  const raw = "claim" in m
    ? claimOf(claims, m.claim)
    : evaluate(m.expression, { claims }, "groups");
  const values = stringList(raw);
  if (values === undefined) throw new Rejected("groups must be a string or a string list");
  return "claim" in m ? values.map((g) => m.prefix + g) : values;
}

function uid(m: ClaimOrExpression, claims: Claims): string {
  const value = "claim" in m ? claimOf(claims, m.claim) : evaluate(m.expression, { claims }, "uid");
  if (typeof value !== "string") throw new Rejected("uid must be a string");
  return value;
}

/** A claim of the token; never something inherited by the object (`constructor`, …). */
function claimOf(claims: Claims, name: string): unknown {
  return Object.hasOwn(claims, name) ? claims[name] : undefined;
}

/**
 * A string or list of strings as a list without empty strings; absent, null and "" give [].
 * `undefined` for anything else.
 */
function stringList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  if (typeof value === "string") return value === "" ? [] : [value];
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) return undefined;
  return value.filter((v) => v !== "");
}

/** JSON with integral numbers as bigint: CEL sees `int` claims (`exp`, `iat`, …) as kube does. */
function celJson(value: unknown): unknown {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(celJson);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, celJson(v)]));
  }
  return value;
}

/** Evaluates an expression; a runtime error rejects the token, naming what was evaluated. */
function evaluate(expr: CompiledExpression, variables: Record<string, unknown>, what: string) {
  try {
    return expr.evaluate(variables);
  } catch (err) {
    if (!(err instanceof CelEvaluationError)) throw err;
    throw new Rejected(`evaluating ${what} expression: ${err.message}`);
  }
}

/** A user the caller may change without touching the cached one. */
function copyOf(user: UserInfo): UserInfo {
  return {
    ...user,
    groups: [...user.groups],
    ...(user.extra
      ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) }
      : {}),
  };
}
