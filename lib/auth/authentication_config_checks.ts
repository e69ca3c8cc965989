/**
 * The checks of meaning kube's `ValidateAuthenticationConfiguration` makes on an
 * `AuthenticationConfiguration` file whose shape the schema (authentication_config_schema.ts)
 * has read: required values, URL rules, uniqueness, fields that exclude each other, and every
 * CEL expression compiled with the result type its field needs (the rules for single values
 * are in authentication_config_rules.ts). The result is the compiled configuration; every
 * error is a line `path: message` in kube's words.
 *
 * The schema's problems are reported where the checks reach their field, so that a file's
 * errors come in one order: an object's unknown fields, then its fields in turn.
 *
 * @module
 */

import { type FieldError, fieldErrorMessage } from "../api/mod.ts";
import {
  CelCompileError,
  type CelEnvironmentName,
  type CelResultKind,
  compile,
  type CompiledExpression,
} from "../cel/mod.ts";
import { formatIssueAsFieldError, quote, type SchemaIssue } from "../config/mod.ts";
import type {
  AnonymousAuthConfig,
  AuthenticationConfig,
  ClaimMappings,
  ClaimOrExpression,
  ClaimValidationRule,
  IssuerConfig,
  JwtAuthenticatorConfig,
  PrefixedClaimOrExpression,
  UserValidationRule,
} from "./authentication_config.ts";
import {
  AUTHENTICATION_CONFIG_API_VERSIONS,
  AUTHENTICATION_CONFIG_KIND,
  type AuthenticationConfigFile,
  type IssuerFile,
  isWithin,
  type JwtAuthenticatorFile,
  MAX_JWT_AUTHENTICATORS,
  type PrefixedClaimOrExpressionFile,
} from "./authentication_config_schema.ts";
import { caBundleProblem, extraKeyErrors, urlProblems } from "./authentication_config_rules.ts";

type Path = readonly (string | number)[];
type Rule = AuthenticationConfigFile["jwt"][number]["claimValidationRules"][number];
type ClaimMappingsFile = JwtAuthenticatorFile["claimMappings"];

/** What the email rule needs to know, gathered across an authenticator's fields as kube does. */
interface EmailUse {
  usesEmail: boolean;
  usesEmailVerified: boolean;
}

/**
 * Checks the meaning of a file `data` whose shape is `file` (with the schema's `issues`),
 * collecting every error, shape and meaning, in `errors`.
 */
export class AuthenticationConfigChecker {
  readonly errors: string[] = [];
  #pending: SchemaIssue[];

  constructor(
    readonly data: unknown,
    issues: readonly SchemaIssue[],
    readonly disallowedIssuers: readonly string[],
  ) {
    this.#pending = [...issues];
  }

  /** The compiled configuration; meaningful only when {@link errors} stays empty. */
  configuration(file: AuthenticationConfigFile): AuthenticationConfig {
    this.#shape([], false);
    this.#shape(["apiVersion"]);
    const { apiVersion, kind } = file;
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
    this.#shape(["kind"]);
    if (kind === undefined || kind === "") this.#required("kind");
    else if (kind !== AUTHENTICATION_CONFIG_KIND) {
      this.#add({
        type: "NotSupported",
        field: "kind",
        value: kind,
        detail: `supported values: ${quote(AUTHENTICATION_CONFIG_KIND)}`,
      });
    }

    this.#shape(["jwt"], false);
    const jwt: JwtAuthenticatorConfig[] = [];
    if (file.jwt.length > MAX_JWT_AUTHENTICATORS) {
      this.#add({
        type: "TooMany",
        field: "jwt",
        detail: `${file.jwt.length}: must have at most ${MAX_JWT_AUTHENTICATORS} items`,
      });
      // The authenticators are not looked at then, their shape neither.
      this.#pending = this.#pending.filter((i) => !isWithin(i.path, ["jwt"]));
    } else {
      const seenIssuers = new Set<string>();
      const seenDiscovery = new Set<string>();
      file.jwt.forEach((raw, i) => {
        const path = `jwt[${i}]`;
        const a = this.#jwtAuthenticator(raw, ["jwt", i]);
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
    this.#shape(["anonymous"], false);
    if (file.anonymous !== undefined) config.anonymous = this.#anonymous(file.anonymous);
    // Every shape problem is reported, even one no check reached.
    this.#shape([]);
    return config;
  }

  #anonymous(raw: NonNullable<AuthenticationConfigFile["anonymous"]>): AnonymousAuthConfig {
    this.#shape(["anonymous", "enabled"]);
    const enabled = raw.enabled ?? false;
    const conditions: { path: string }[] = [];
    const seen = new Set<string>();
    this.#shape(["anonymous", "conditions"], false);
    raw.conditions.forEach((c, i) => {
      this.#shape(["anonymous", "conditions", i]);
      const path = `anonymous.conditions[${i}]`;
      const p = c.path ?? "";
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

  #jwtAuthenticator(raw: JwtAuthenticatorFile, at: Path): JwtAuthenticatorConfig {
    this.#shape(at, false);
    const email: EmailUse = { usesEmail: false, usesEmailVerified: false };
    const issuer = this.#issuer(raw.issuer, [...at, "issuer"]);
    const claimValidationRules = this.#claimValidationRules(
      raw.claimValidationRules,
      [...at, "claimValidationRules"],
      email,
    );
    const claimMappings = this.#claimMappings(raw.claimMappings, [...at, "claimMappings"], email);
    const userValidationRules = this.#userValidationRules(
      raw.userValidationRules,
      [...at, "userValidationRules"],
    );
    return { issuer, claimValidationRules, claimMappings, userValidationRules };
  }

  #issuer(raw: IssuerFile, at: Path): IssuerConfig {
    const path = pathText(at);
    this.#shape(at, false);
    this.#shape([...at, "url"]);
    const url = raw.url ?? "";
    if (url === "") this.#required(`${path}.url`);
    else this.#url(url, `${path}.url`, this.disallowedIssuers);

    this.#shape([...at, "discoveryURL"]);
    const discoveryURL = raw.discoveryURL || undefined;
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

    this.#shape([...at, "audiences"]);
    this.#shape([...at, "audienceMatchPolicy"]);
    const audiences = this.#audiences(raw, path);

    this.#shape([...at, "certificateAuthority"]);
    const certificateAuthority = raw.certificateAuthority || undefined;
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
    for (const detail of urlProblems(text, disallowed)) this.#invalid(field, text, detail);
  }

  #audiences(raw: IssuerFile, issuerPath: string): string[] {
    const path = `${issuerPath}.audiences`;
    const policyPath = `${issuerPath}.audienceMatchPolicy`;
    const audiences = raw.audiences.map((a) => a ?? "");
    const policy = raw.audienceMatchPolicy ?? "";
    if (audiences.length === 0) {
      this.#required(path, `at least one ${path} is required`);
      return audiences;
    }
    const seen = new Set<string>();
    audiences.forEach((a, i) => {
      if (a === "") this.#required(`${path}[${i}]`);
      if (seen.has(a)) this.#duplicate(`${path}[${i}]`, a);
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

  #claimValidationRules(rules: Rule[], at: Path, email: EmailUse): ClaimValidationRule[] {
    this.#shape(at, false);
    const out: ClaimValidationRule[] = [];
    const seenClaims = new Set<string>();
    const seenExpressions = new Set<string>();
    rules.forEach((r, i) => {
      this.#shape([...at, i]);
      const p = pathText([...at, i]);
      const claim = r.claim ?? "";
      const requiredValue = r.requiredValue ?? "";
      const expression = r.expression ?? "";
      const message = r.message ?? "";
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

  #claimMappings(raw: ClaimMappingsFile, at: Path, email: EmailUse): ClaimMappings {
    this.#shape(at, false);
    const path = pathText(at);
    const usernamePath = `${path}.username`;
    this.#shape([...at, "username"]);
    const username = this.#prefixed(raw.username, usernamePath, true, "string");
    if (username && "expression" in username) {
      email.usesEmail ||= username.expression.usesClaim("email");
      email.usesEmailVerified ||= username.expression.usesClaim("email_verified");
    }
    this.#shape([...at, "groups"]);
    const groups = this.#prefixed(raw.groups, `${path}.groups`, false, "string|list<string>");
    this.#shape([...at, "uid"]);
    const uid = this.#uid(raw.uid, `${path}.uid`);
    const extra = this.#extra(raw.extra, [...at, "extra"], email);
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
    raw: PrefixedClaimOrExpressionFile,
    path: string,
    required: boolean,
    expect: CelResultKind,
  ): PrefixedClaimOrExpression | undefined {
    const claim = raw.claim ?? "";
    const prefix = raw.prefix;
    const expression = raw.expression ?? "";
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

  #uid(raw: ClaimMappingsFile["uid"], path: string): ClaimOrExpression | undefined {
    const claim = raw.claim ?? "";
    const expression = raw.expression ?? "";
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

  #extra(raw: ClaimMappingsFile["extra"], at: Path, email: EmailUse): ClaimMappings["extra"] {
    this.#shape(at, false);
    const out: ClaimMappings["extra"] = [];
    const seen = new Set<string>();
    raw.forEach((m, i) => {
      this.#shape([...at, i]);
      const p = pathText([...at, i]);
      const key = m.key ?? "";
      const valueExpression = m.valueExpression ?? "";
      for (const e of extraKeyErrors(`${p}.key`, key)) this.#add(e);
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

  #userValidationRules(
    rules: JwtAuthenticatorFile["userValidationRules"],
    at: Path,
  ): UserValidationRule[] {
    this.#shape(at, false);
    const out: UserValidationRule[] = [];
    const seen = new Set<string>();
    rules.forEach((r, i) => {
      this.#shape([...at, i]);
      const p = pathText([...at, i]);
      const expression = r.expression ?? "";
      const message = r.message ?? "";
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

  /** Reports the schema's problems at `path` (and, when `deep`, under it) not yet reported. */
  #shape(path: Path, deep = true) {
    const here = (i: SchemaIssue) =>
      deep ? isWithin(i.path, path) : i.path.length === path.length && isWithin(i.path, path);
    for (const issue of this.#pending.filter(here)) {
      this.errors.push(...formatIssueAsFieldError(issue, this.data));
    }
    this.#pending = this.#pending.filter((i) => !here(i));
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
}

/** `jwt[0].claimMappings`: the fields of this file are all plain names. */
function pathText(path: Path): string {
  return path.map((seg, i) => typeof seg === "number" ? `[${seg}]` : i === 0 ? seg : `.${seg}`)
    .join("");
}
