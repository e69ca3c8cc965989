/**
 * The `--authentication-config` file (`AuthenticationConfiguration`, spec 03): JWT
 * authenticators and anonymous access. Loading validates every field the way kube's
 * `ValidateAuthenticationConfiguration` does, with its messages and field paths, and compiles
 * every CEL expression with the result type its field needs; nothing is checked later.
 *
 * `apiVersion` is `apiserver.platform.io/v1beta1`; kube's own spellings
 * (`apiserver.config.k8s.io/v1`, `v1beta1`, `v1alpha1`) are accepted too, because users copy
 * upstream files and the fields are the same. Unknown fields are errors. `jwt` may be empty or
 * absent (kube allows no authenticators); a file without `anonymous` leaves anonymous access
 * off.
 *
 * @module
 */

import { parseYamlConfig } from "../config/yaml_file.ts";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { type FieldError, fieldErrorMessage } from "../api/errors.ts";
import { isDNS1123Subdomain } from "../api/names.ts";
import { decodePem } from "../certificates/pki.ts";
import {
  CelCompileError,
  type CelEnvironmentName,
  type CelResultKind,
  compile,
  type CompiledExpression,
} from "../cel/mod.ts";
import { ConfigError, osReason, quote } from "../config/flags.ts";

/** The `apiVersion` of the file; the others are kube's spellings of the same type. */
export const AUTHENTICATION_CONFIG_API_VERSION = "apiserver.platform.io/v1beta1";
export const AUTHENTICATION_CONFIG_API_VERSIONS = [
  AUTHENTICATION_CONFIG_API_VERSION,
  "apiserver.config.k8s.io/v1",
  "apiserver.config.k8s.io/v1beta1",
  "apiserver.config.k8s.io/v1alpha1",
] as const;
export const AUTHENTICATION_CONFIG_KIND = "AuthenticationConfiguration";
/** kube's limit on the number of JWT authenticators. */
export const MAX_JWT_AUTHENTICATORS = 64;

/** A validated configuration file. */
export interface AuthenticationConfig {
  jwt: JwtAuthenticatorConfig[];
  /** Absent when the file has no `anonymous` field. */
  anonymous?: AnonymousAuthConfig;
}

export interface AnonymousAuthConfig {
  enabled: boolean;
  /** When non-empty, anonymous requests are allowed only for these exact paths. */
  conditions: { path: string }[];
}

export interface JwtAuthenticatorConfig {
  issuer: IssuerConfig;
  claimValidationRules: ClaimValidationRule[];
  claimMappings: ClaimMappings;
  userValidationRules: UserValidationRule[];
}

export interface IssuerConfig {
  url: string;
  discoveryURL?: string;
  /** PEM bundle trusted for the discovery and JWKS connections. */
  certificateAuthority?: string;
  audiences: string[];
}

/** A required claim (string-valued, equal to `requiredValue`) or a boolean expression. */
export type ClaimValidationRule =
  | { claim: string; requiredValue: string }
  | { expression: CompiledExpression; message?: string };

export type ClaimOrExpression = { claim: string } | { expression: CompiledExpression };
/** With a claim the prefix is explicit (possibly ""); expressions build the whole value. */
export type PrefixedClaimOrExpression =
  | { claim: string; prefix: string }
  | { expression: CompiledExpression };

export interface ClaimMappings {
  username: PrefixedClaimOrExpression;
  groups?: PrefixedClaimOrExpression;
  uid?: ClaimOrExpression;
  extra: { key: string; valueExpression: CompiledExpression }[];
}

export interface UserValidationRule {
  expression: CompiledExpression;
  message?: string;
}

/** Every error of a configuration file, one line each, naming the file and field path. */
export class AuthenticationConfigError extends ConfigError {
  override name = "AuthenticationConfigError";
  constructor(readonly errors: string[]) {
    super(errors.join("\n"));
  }
}

/** Options of {@link loadAuthenticationConfig} and {@link parseAuthenticationConfig}. */
export interface AuthenticationConfigOptions {
  /**
   * Issuers no JWT authenticator may use: the service account token issuers, whose tokens the
   * service account authenticator checks. @default []
   */
  disallowedIssuers?: readonly string[];
}

/**
 * Read and validate the file at `path`; messages name it as given.
 *
 * @throws {ConfigError} when the file cannot be read; {@link AuthenticationConfigError} listing
 * every invalid field.
 * @example
 * ```ts
 * const cfg = await loadAuthenticationConfig("auth.yaml");
 * cfg.jwt[0].issuer.url; // "https://issuer.example.com"
 * ```
 */
export async function loadAuthenticationConfig(
  path: string,
  opts: AuthenticationConfigOptions = {},
): Promise<AuthenticationConfig> {
  return parseAuthenticationConfig(await readAuthenticationConfigFile(path), path, opts);
}

/**
 * The text of the file at `path`.
 *
 * @throws {ConfigError} `--authentication-config: cannot read "x.yaml": No such file or directory`
 */
export async function readAuthenticationConfigFile(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    throw new ConfigError(`--authentication-config: cannot read ${quote(path)}: ${osReason(err)}`);
  }
}

/**
 * Validate the text of a configuration file named `file` (for messages).
 *
 * @throws {AuthenticationConfigError}
 */
export function parseAuthenticationConfig(
  text: string,
  file: string,
  opts: AuthenticationConfigOptions = {},
): AuthenticationConfig {
  let data: unknown;
  try {
    data = parseYamlConfig(text, file);
  } catch (err) {
    // Every invalid file is one AuthenticationConfigError listing its problems.
    if (err instanceof ConfigError) throw new AuthenticationConfigError([err.message]);
    throw err;
  }
  if (data === null || data === undefined) {
    throw new AuthenticationConfigError([
      `${file}: the file is empty; expected apiVersion: ${AUTHENTICATION_CONFIG_API_VERSION} ` +
      `and kind: ${AUTHENTICATION_CONFIG_KIND}`,
    ]);
  }
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new AuthenticationConfigError([`${file}: expected a mapping at the top level`]);
  }
  const v = new Validator(opts.disallowedIssuers ?? []);
  const config = v.configuration(data);
  if (v.errors.length > 0) {
    throw new AuthenticationConfigError(v.errors.map((e) => `${file}: ${e}`));
  }
  return config;
}

// ---------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

const child = (path: string, name: string) =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
    ? (path === "" ? name : `${path}.${name}`)
    : `${path}[${JSON.stringify(name)}]`;
const index = (path: string, i: number) => `${path}[${i}]`;

/** Walks the decoded YAML once, collecting every error as `path: message`. */
class Validator {
  readonly errors: string[] = [];
  #disallowedIssuers: readonly string[];

  constructor(disallowedIssuers: readonly string[]) {
    this.#disallowedIssuers = disallowedIssuers;
  }

  #add(e: FieldError) {
    this.errors.push(fieldErrorMessage(e));
  }

  #invalid(field: string, value: unknown, detail: string) {
    this.#add({ type: "Invalid", field, value, detail });
  }

  #required(field: string, detail?: string) {
    this.#add({ type: "Required", field, detail });
  }

  #duplicate(field: string, value: string) {
    this.#add({ type: "Duplicate", field, value });
  }

  configuration(data: unknown): AuthenticationConfig {
    const o = this.#object(data, "", ["apiVersion", "kind", "jwt", "anonymous"]);
    const apiVersion = this.#string(o.apiVersion, "apiVersion");
    if (apiVersion === undefined || apiVersion === "") {
      this.#required("apiVersion");
    } else if (!(AUTHENTICATION_CONFIG_API_VERSIONS as readonly string[]).includes(apiVersion)) {
      this.#add({
        type: "NotSupported",
        field: "apiVersion",
        value: apiVersion,
        detail: `supported values: ${AUTHENTICATION_CONFIG_API_VERSIONS.map(quote).join(", ")}`,
      });
    }
    const kind = this.#string(o.kind, "kind");
    if (kind === undefined || kind === "") this.#required("kind");
    else if (kind !== AUTHENTICATION_CONFIG_KIND) {
      this.#add({
        type: "NotSupported",
        field: "kind",
        value: kind,
        detail: `supported values: ${quote(AUTHENTICATION_CONFIG_KIND)}`,
      });
    }

    const list = this.#list(o.jwt, "jwt");
    const jwt: JwtAuthenticatorConfig[] = [];
    if (list.length > MAX_JWT_AUTHENTICATORS) {
      this.#add({
        type: "TooMany",
        field: "jwt",
        detail: `${list.length}: must have at most ${MAX_JWT_AUTHENTICATORS} items`,
      });
    } else {
      const seenIssuers = new Set<string>();
      const seenDiscovery = new Set<string>();
      list.forEach((raw, i) => {
        const path = index("jwt", i);
        const a = this.#jwtAuthenticator(raw, path);
        jwt.push(a);
        const { url, discoveryURL } = a.issuer;
        if (seenIssuers.has(url)) {
          this.#duplicate(`${path}.issuer.url`, url);
        }
        seenIssuers.add(url);
        if (discoveryURL !== undefined) {
          if (seenDiscovery.has(discoveryURL)) {
            this.#duplicate(`${path}.issuer.discoveryURL`, discoveryURL);
          }
          seenDiscovery.add(discoveryURL);
        }
      });
    }

    const config: AuthenticationConfig = { jwt };
    if (o.anonymous !== undefined && o.anonymous !== null) {
      config.anonymous = this.#anonymous(o.anonymous);
    }
    return config;
  }

  #anonymous(raw: unknown): AnonymousAuthConfig {
    const o = this.#object(raw, "anonymous", ["enabled", "conditions"]);
    const enabled = this.#bool(o.enabled, "anonymous.enabled") ?? false;
    const conditions: { path: string }[] = [];
    const seen = new Set<string>();
    this.#list(o.conditions, "anonymous.conditions").forEach((c, i) => {
      const path = index("anonymous.conditions", i);
      const p = this.#string(this.#object(c, path, ["path"]).path, `${path}.path`) ?? "";
      if (p === "") this.#required(`${path}.path`);
      else if (seen.has(p)) this.#duplicate(`${path}.path`, p);
      seen.add(p);
      conditions.push({ path: p });
    });
    if (!enabled && conditions.length > 0) {
      this.#invalid(
        "anonymous.conditions",
        conditions,
        "enabled should be set to true when conditions are defined",
      );
    }
    return { enabled, conditions };
  }

  #jwtAuthenticator(raw: unknown, path: string): JwtAuthenticatorConfig {
    const o = this.#object(raw, path, [
      "issuer",
      "claimValidationRules",
      "claimMappings",
      "userValidationRules",
    ]);
    // What the email rule needs to know, gathered across the fields as kube does.
    const email = { usesEmail: false, usesEmailVerified: false };
    const issuer = this.#issuer(o.issuer, `${path}.issuer`);
    const claimValidationRules = this.#claimValidationRules(
      o.claimValidationRules,
      `${path}.claimValidationRules`,
      email,
    );
    const claimMappings = this.#claimMappings(o.claimMappings, `${path}.claimMappings`, email);
    const userValidationRules = this.#userValidationRules(
      o.userValidationRules,
      `${path}.userValidationRules`,
    );
    return { issuer, claimValidationRules, claimMappings, userValidationRules };
  }

  #issuer(raw: unknown, path: string): IssuerConfig {
    const o = this.#object(raw, path, [
      "url",
      "discoveryURL",
      "certificateAuthority",
      "audiences",
      "audienceMatchPolicy",
    ]);
    const url = this.#string(o.url, `${path}.url`) ?? "";
    if (url === "") this.#required(`${path}.url`);
    else this.#url(url, `${path}.url`, this.#disallowedIssuers);

    const discoveryURL = this.#string(o.discoveryURL, `${path}.discoveryURL`) || undefined;
    if (discoveryURL !== undefined) {
      if (url !== "" && url.replace(/\/+$/, "") === discoveryURL.replace(/\/+$/, "")) {
        this.#invalid(
          `${path}.discoveryURL`,
          discoveryURL,
          "discoveryURL must be different from URL",
        );
      }
      this.#url(discoveryURL, `${path}.discoveryURL`, []);
    }

    const audiences = this.#audiences(o, path);

    const certificateAuthority = this.#string(
      o.certificateAuthority,
      `${path}.certificateAuthority`,
    ) || undefined;
    if (certificateAuthority !== undefined) {
      const problem = caBundleProblem(certificateAuthority);
      if (problem) {
        this.#invalid(`${path}.certificateAuthority`, "<omitted>", problem);
      }
    }

    const out: IssuerConfig = { url, audiences };
    if (discoveryURL !== undefined) out.discoveryURL = discoveryURL;
    if (certificateAuthority !== undefined) out.certificateAuthority = certificateAuthority;
    return out;
  }

  #url(text: string, field: string, disallowed: readonly string[]) {
    const invalid = (detail: string) => this.#invalid(field, text, detail);
    if (disallowed.includes(text)) {
      invalid(
        `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(" ")}]`,
      );
    }
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      // Go's parser takes "example.com" as a path without a scheme.
      invalid(/^[a-z][a-z0-9+.-]*:/i.test(text) ? "not a valid URL" : "URL scheme must be https");
      return;
    }
    if (u.protocol !== "https:") invalid("URL scheme must be https");
    if (u.username !== "" || u.password !== "") {
      invalid("URL must not contain a username or password");
    }
    if (u.search !== "") invalid("URL must not contain a query");
    if (u.hash !== "") invalid("URL must not contain a fragment");
  }

  #audiences(o: Obj, issuerPath: string): string[] {
    const path = `${issuerPath}.audiences`;
    const policyPath = `${issuerPath}.audienceMatchPolicy`;
    const audiences = this.#list(o.audiences, path).map((a, i) =>
      this.#string(a, index(path, i)) ?? ""
    );
    const policy = this.#string(o.audienceMatchPolicy, policyPath) ?? "";
    if (audiences.length === 0) {
      this.#required(path, `at least one ${path} is required`);
      return audiences;
    }
    const seen = new Set<string>();
    audiences.forEach((a, i) => {
      if (a === "") this.#required(index(path, i));
      if (seen.has(a)) this.#duplicate(index(path, i), a);
      seen.add(a);
    });
    if (audiences.length > 1 && policy !== "MatchAny") {
      this.#invalid(
        policyPath,
        policy,
        "audienceMatchPolicy must be MatchAny for multiple audiences",
      );
    }
    if (audiences.length === 1 && policy !== "" && policy !== "MatchAny") {
      this.#invalid(
        policyPath,
        policy,
        "audienceMatchPolicy must be empty or MatchAny for single audience",
      );
    }
    return audiences;
  }

  #claimValidationRules(
    raw: unknown,
    path: string,
    email: { usesEmailVerified: boolean },
  ): ClaimValidationRule[] {
    const out: ClaimValidationRule[] = [];
    const seenClaims = new Set<string>();
    const seenExpressions = new Set<string>();
    this.#list(raw, path).forEach((r, i) => {
      const p = index(path, i);
      const o = this.#object(r, p, ["claim", "requiredValue", "expression", "message"]);
      const claim = this.#string(o.claim, `${p}.claim`) ?? "";
      const requiredValue = this.#string(o.requiredValue, `${p}.requiredValue`) ?? "";
      const expression = this.#string(o.expression, `${p}.expression`) ?? "";
      const message = this.#string(o.message, `${p}.message`) ?? "";
      if (claim !== "" && expression !== "") {
        this.#invalid(p, claim, "claim and expression can't both be set");
      } else if (claim === "" && expression === "") {
        this.#required(p, "claim or expression is required");
      } else if (claim !== "") {
        if (message !== "") {
          this.#invalid(`${p}.message`, message, "may not be specified when claim is set");
        }
        if (seenClaims.has(claim)) {
          this.#duplicate(`${p}.claim`, claim);
        }
        seenClaims.add(claim);
        out.push({ claim, requiredValue });
      } else {
        if (requiredValue !== "") {
          this.#invalid(
            `${p}.requiredValue`,
            requiredValue,
            "may not be specified when expression is set",
          );
        }
        if (seenExpressions.has(expression)) {
          this.#duplicate(`${p}.expression`, expression);
          return;
        }
        seenExpressions.add(expression);
        const compiled = this.#compile("claims", expression, "bool", `${p}.expression`);
        if (compiled) {
          email.usesEmailVerified ||= compiled.usesClaim("email_verified");
          out.push(message === "" ? { expression: compiled } : { expression: compiled, message });
        }
      }
    });
    return out;
  }

  #claimMappings(
    raw: unknown,
    path: string,
    email: { usesEmail: boolean; usesEmailVerified: boolean },
  ): ClaimMappings {
    const o = this.#object(raw, path, ["username", "groups", "uid", "extra"]);
    const usernamePath = `${path}.username`;
    const username = this.#prefixed(o.username, usernamePath, true, "string");
    if (username && "expression" in username) {
      email.usesEmail ||= username.expression.usesClaim("email");
      email.usesEmailVerified ||= username.expression.usesClaim("email_verified");
    }
    const groups = this.#prefixed(o.groups, `${path}.groups`, false, "string|list<string>");
    const uid = this.#uid(o.uid, `${path}.uid`);
    const extra = this.#extra(o.extra, `${path}.extra`, email);
    if (email.usesEmail && !email.usesEmailVerified && username && "expression" in username) {
      this.#invalid(
        `${usernamePath}.expression`,
        username.expression.expression,
        "claims.email_verified must be used in claimMappings.username.expression or " +
          "claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when " +
          "claims.email is used in claimMappings.username.expression",
      );
    }
    const out: ClaimMappings = {
      // Absent only when an error was reported: the value is never used then.
      username: username ?? { claim: "", prefix: "" },
      extra,
    };
    if (groups) out.groups = groups;
    if (uid) out.uid = uid;
    return out;
  }

  #prefixed(
    raw: unknown,
    path: string,
    required: boolean,
    expect: CelResultKind,
  ): PrefixedClaimOrExpression | undefined {
    const o = this.#object(raw, path, ["claim", "prefix", "expression"]);
    const claim = this.#string(o.claim, `${path}.claim`) ?? "";
    const prefix = this.#string(o.prefix, `${path}.prefix`);
    const expression = this.#string(o.expression, `${path}.expression`) ?? "";
    if (claim !== "" && expression !== "") {
      this.#invalid(path, "", "claim and expression can't both be set");
      return undefined;
    }
    if (expression !== "") {
      if (prefix !== undefined) {
        this.#invalid(`${path}.prefix`, prefix, "may not be specified when expression is set");
      }
      const compiled = this.#compile("claims", expression, expect, `${path}.expression`);
      return compiled && { expression: compiled };
    }
    if (claim !== "") {
      if (prefix === undefined) {
        this.#required(
          `${path}.prefix`,
          "prefix is required when claim is set. It can be set to an empty string to disable prefixing",
        );
        return undefined;
      }
      return { claim, prefix };
    }
    if (required) {
      this.#required(path, "claim or expression is required");
    }
    return undefined;
  }

  #uid(raw: unknown, path: string): ClaimOrExpression | undefined {
    const o = this.#object(raw, path, ["claim", "expression"]);
    const claim = this.#string(o.claim, `${path}.claim`) ?? "";
    const expression = this.#string(o.expression, `${path}.expression`) ?? "";
    if (claim !== "" && expression !== "") {
      this.#invalid(path, "", "claim and expression can't both be set");
      return undefined;
    }
    if (expression !== "") {
      const compiled = this.#compile("claims", expression, "string", `${path}.expression`);
      return compiled && { expression: compiled };
    }
    return claim !== "" ? { claim } : undefined;
  }

  #extra(
    raw: unknown,
    path: string,
    email: { usesEmailVerified: boolean },
  ): ClaimMappings["extra"] {
    const out: ClaimMappings["extra"] = [];
    const seen = new Set<string>();
    this.#list(raw, path).forEach((m, i) => {
      const p = index(path, i);
      const o = this.#object(m, p, ["key", "valueExpression"]);
      const key = this.#string(o.key, `${p}.key`) ?? "";
      const valueExpression = this.#string(o.valueExpression, `${p}.valueExpression`) ?? "";
      for (const e of domainPrefixedPathErrors(`${p}.key`, key)) this.#add(e);
      if (key !== key.toLowerCase()) {
        this.#invalid(`${p}.key`, key, "must be lowercase");
      }
      if (isReservedDomain(key)) {
        this.#invalid(
          `${p}.key`,
          key,
          "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use",
        );
      }
      if (seen.has(key)) {
        this.#duplicate(`${p}.key`, key);
        return;
      }
      seen.add(key);
      if (valueExpression === "") {
        this.#required(`${p}.valueExpression`);
        return;
      }
      const compiled = this.#compile(
        "claims",
        valueExpression,
        "string|list<string>",
        `${p}.valueExpression`,
      );
      if (compiled) {
        email.usesEmailVerified ||= compiled.usesClaim("email_verified");
        out.push({ key, valueExpression: compiled });
      }
    });
    return out;
  }

  #userValidationRules(raw: unknown, path: string): UserValidationRule[] {
    const out: UserValidationRule[] = [];
    const seen = new Set<string>();
    this.#list(raw, path).forEach((r, i) => {
      const p = index(path, i);
      const o = this.#object(r, p, ["expression", "message"]);
      const expression = this.#string(o.expression, `${p}.expression`) ?? "";
      const message = this.#string(o.message, `${p}.message`) ?? "";
      if (expression === "") {
        this.#required(`${p}.expression`);
        return;
      }
      if (seen.has(expression)) {
        this.#duplicate(`${p}.expression`, expression);
        return;
      }
      seen.add(expression);
      const compiled = this.#compile("user", expression, "bool", `${p}.expression`);
      if (compiled) {
        out.push(message === "" ? { expression: compiled } : { expression: compiled, message });
      }
    });
    return out;
  }

  #compile(
    env: CelEnvironmentName,
    expression: string,
    expect: CelResultKind,
    field: string,
  ): CompiledExpression | undefined {
    try {
      return compile(env, expression, { expect });
    } catch (err) {
      if (!(err instanceof CelCompileError)) throw err;
      const at = err.position ? ` at line ${err.position.line}, column ${err.position.column}` : "";
      this.#invalid(field, expression, `compilation failed${at}: ${err.message}`);
      return undefined;
    }
  }

  // Shapes. null is taken as absent, as kube's decoder does.

  #object(v: unknown, path: string, known: readonly string[]): Obj {
    if (v === undefined || v === null) return {};
    if (typeof v !== "object" || Array.isArray(v)) {
      this.#typeError(path, v, "must be a mapping");
      return {};
    }
    for (const k of Object.keys(v)) {
      if (!known.includes(k)) this.errors.push(`${child(path, k)}: unknown field`);
    }
    return v as Obj;
  }

  #list(v: unknown, path: string): unknown[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.#typeError(path, v, "must be a list");
      return [];
    }
    return v;
  }

  #string(v: unknown, path: string): string | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") {
      this.#typeError(path, v, "must be a string");
      return undefined;
    }
    return v;
  }

  #bool(v: unknown, path: string): boolean | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "boolean") {
      this.#typeError(path, v, "must be a boolean");
      return undefined;
    }
    return v;
  }

  #typeError(field: string, value: unknown, detail: string) {
    const shown = Array.isArray(value) ? "<list>" : typeof value === "object" ? "<mapping>" : value;
    this.#add({ type: "TypeInvalid", field, value: shown, detail });
  }
}

/** Why a PEM bundle cannot serve as trust roots, or undefined when it can. */
function caBundleProblem(pem: string): string | undefined {
  const blocks = decodePem(pem).filter((b) => b.type === "CERTIFICATE");
  if (blocks.length === 0) return "data does not contain any valid RSA or ECDSA certificates";
  for (const [i, block] of blocks.entries()) {
    try {
      new x509.X509Certificate(block.der);
    } catch {
      return `certificate ${i + 1} does not parse`;
    }
  }
  return undefined;
}

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const httpPathRe = new RegExp(`^${HTTP_PATH_FMT}$`);

/** kube's IsDomainPrefixedPath: `acme.io/foo`, an RFC 1123 subdomain, `/`, an HTTP path. */
function domainPrefixedPathErrors(field: string, key: string): FieldError[] {
  if (key === "") return [{ type: "Required", field }];
  const slash = key.indexOf("/");
  const host = slash < 0 ? key : key.slice(0, slash);
  const path = slash < 0 ? "" : key.slice(slash + 1);
  if (host === "" || path === "") {
    return [{
      type: "Invalid",
      field,
      value: key,
      detail: 'must be a domain-prefixed path (such as "acme.io/foo")',
    }];
  }
  const errs: FieldError[] = isDNS1123Subdomain(host).map((detail) => ({
    type: "Invalid",
    field,
    value: host,
    detail,
  }));
  if (!httpPathRe.test(path)) {
    errs.push({
      type: "Invalid",
      field,
      value: path,
      detail: `Invalid path (regex used for validation is '${HTTP_PATH_FMT}')`,
    });
  }
  return errs;
}

/** Extra keys under kube's own domains are kube's to define. */
function isReservedDomain(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  return ["kubernetes.io", "k8s.io"].some((d) => domain === d || domain.endsWith(`.${d}`));
}
