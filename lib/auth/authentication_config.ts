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
 * This module loads the file and holds its validated, compiled form (the types below). The
 * file's shape is a zod schema (authentication_config_schema.ts); the checks of meaning and the
 * compiling are in authentication_config_checks.ts.
 *
 * @module
 */

import { ConfigError, parseYamlConfig, readConfigFile } from "../config/mod.ts";
import type { CompiledExpression } from "../cel/mod.ts";
import { AuthenticationConfigChecker } from "./authentication_config_checks.ts";
import {
  AUTHENTICATION_CONFIG_API_VERSION,
  AUTHENTICATION_CONFIG_KIND,
  parseAuthenticationConfigShape,
} from "./authentication_config_schema.ts";

export {
  AUTHENTICATION_CONFIG_API_VERSION,
  AUTHENTICATION_CONFIG_API_VERSIONS,
  AUTHENTICATION_CONFIG_KIND,
  MAX_JWT_AUTHENTICATORS,
} from "./authentication_config_schema.ts";

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
export function readAuthenticationConfigFile(path: string): Promise<string> {
  return readConfigFile("--authentication-config", path);
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
  const shape = parseAuthenticationConfigShape(data as Record<string, unknown>);
  const checker = new AuthenticationConfigChecker(
    data,
    shape.issues,
    opts.disallowedIssuers ?? [],
  );
  const config = checker.configuration(shape.file);
  if (checker.errors.length > 0) {
    throw new AuthenticationConfigError(checker.errors.map((e) => `${file}: ${e}`));
  }
  return config;
}
