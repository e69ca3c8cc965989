/**
 * Anonymous requests: a request that carries no credential at all may proceed as
 * `system:anonymous` when the authentication configuration enables it, for every path or only
 * for the exact paths its conditions list. A request whose credential was rejected is never
 * anonymous: it gets 401, as in kube.
 *
 * @module
 */

import type { UserInfo } from "../api/mod.ts";
import { ConfigError } from "../config/mod.ts";
import type { AnonymousAuthConfig, AuthenticationConfig } from "./authentication_config.ts";

/** The user of an anonymous request (a fresh object each call). */
export function anonymousUser(): UserInfo {
  return { username: "system:anonymous", groups: ["system:unauthenticated"] };
}

/**
 * Whether a request without credentials to `path` (the URL path, no query) may proceed as
 * {@link anonymousUser}. Off when the file has no `anonymous` field.
 *
 * @example
 * ```ts
 * anonymousAllowed({enabled: true, conditions: [{path: "/livez"}]}, "/livez"); // true
 * anonymousAllowed({enabled: true, conditions: [{path: "/livez"}]}, "/readyz"); // false
 * ```
 */
export function anonymousAllowed(config: AnonymousAuthConfig | undefined, path: string): boolean {
  if (!config?.enabled) return false;
  return config.conditions.length === 0 || config.conditions.some((c) => c.path === path);
}

/**
 * kube's rule: anonymous access is configured by the file or by `--anonymous-auth`, not both.
 * `flagSet` is whether `--anonymous-auth` was given explicitly on the command line.
 *
 * @throws {ConfigError} `auth.yaml: anonymous: Forbidden: --anonymous-auth flag cannot be set …`
 */
export function checkAnonymousFlagConflict(
  config: AuthenticationConfig,
  opts: { file: string; flagSet: boolean },
): void {
  if (config.anonymous !== undefined && opts.flagSet) {
    throw new ConfigError(
      `${opts.file}: anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous ` +
        "field is configured in authentication configuration file",
    );
  }
}
