/**
 * The `--authentication-config` file, live: loaded at start (an invalid file stops the start),
 * then read again every poll interval. A changed file that is valid replaces the JWT
 * authenticators and the anonymous settings in one step; an invalid one (or a missing file,
 * e.g. between an editor's delete and write) is logged once, as one error line naming the file
 * and field paths, and the previous configuration stays in force.
 *
 * Polling the content (rather than watching the directory) sees every way of replacing the
 * file, renames included, and costs one small read per interval.
 *
 * @module
 */

import type { Logger, UserInfo } from "../api/mod.ts";
import { ConfigError, osReason } from "../config/mod.ts";
import type { Authenticator } from "./authenticator.ts";
import {
  type AuthenticationConfig,
  type AuthenticationConfigOptions,
  parseAuthenticationConfig,
  readAuthenticationConfigFile,
} from "./authentication_config.ts";
import { anonymousAllowed, checkAnonymousFlagConflict } from "./anonymous.ts";
import { JwtAuthenticator, type JwtAuthenticatorOptions } from "./jwt.ts";

/** Options of {@link AuthenticationConfigReloader.start}. */
export interface AuthenticationConfigReloaderOptions extends AuthenticationConfigOptions {
  /** The file, as the user gave it (messages name it so). */
  path: string;
  logger: Logger;
  /** Whether `--anonymous-auth` was given explicitly: a file with `anonymous` is then invalid. */
  anonymousFlagSet?: boolean;
  /** How often the file is read again. @default 1000 */
  pollIntervalMs?: number;
  /** Options of every issuer's discovery and key fetching. */
  jwt?: Omit<JwtAuthenticatorOptions, "logger">;
}

interface Active {
  config: AuthenticationConfig;
  authenticators: JwtAuthenticator[];
}

export class AuthenticationConfigReloader implements Authenticator {
  readonly #opts: AuthenticationConfigReloaderOptions;
  #active: Active;
  /** The last content looked at (or why it could not be read), valid or not. */
  #seen: string;
  #timer?: ReturnType<typeof setTimeout>;
  #stopped = false;

  private constructor(opts: AuthenticationConfigReloaderOptions, text: string, active: Active) {
    this.#opts = opts;
    this.#seen = text;
    this.#active = active;
    this.#schedule();
  }

  /**
   * Loads the file and starts watching it.
   *
   * @throws {ConfigError} when the file cannot be read or is invalid.
   * @example
   * ```ts
   * const authn = await AuthenticationConfigReloader.start({path: "auth.yaml", logger});
   * const user = await authn.authenticate(req) ??
   *   (!req.headers.has("Authorization") && authn.anonymousAllowed(path) ? anonymousUser() : undefined);
   * ```
   */
  static async start(
    opts: AuthenticationConfigReloaderOptions,
  ): Promise<AuthenticationConfigReloader> {
    const text = await readAuthenticationConfigFile(opts.path);
    const config = parse(text, opts);
    return new AuthenticationConfigReloader(opts, text, {
      config,
      authenticators: buildAuthenticators(config, opts),
    });
  }

  /** The configuration in force. */
  get config(): AuthenticationConfig {
    return this.#active.config;
  }

  /** The user from a JWT of a configured issuer; `undefined` for any other credential. */
  async authenticate(req: Request): Promise<UserInfo | undefined> {
    // One snapshot per request: a reload in between does not mix two configurations.
    const { authenticators } = this.#active;
    for (const a of authenticators) {
      const user = await a.authenticate(req);
      if (user) return user;
    }
    return undefined;
  }

  /** Whether a request without credentials to `path` may proceed as `system:anonymous`. */
  anonymousAllowed(path: string): boolean {
    return anonymousAllowed(this.#active.config.anonymous, path);
  }

  /** Stops watching and closes every issuer connection. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    for (const a of this.#active.authenticators) a.close();
  }

  #schedule() {
    this.#timer = setTimeout(async () => {
      await this.#check();
      if (!this.#stopped) this.#schedule();
    }, this.#opts.pollIntervalMs ?? 1000);
  }

  async #check() {
    const { path, logger } = this.#opts;
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (err) {
      this.#reject(`\0${osReason(err)}`, `cannot read ${path}: ${osReason(err)}`);
      return;
    }
    if (text === this.#seen || this.#stopped) return;
    let config: AuthenticationConfig;
    try {
      config = parse(text, this.#opts);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.#reject(text, err.message.replaceAll("\n", "; "));
      return;
    }
    this.#seen = text;
    const old = this.#active;
    this.#active = { config, authenticators: buildAuthenticators(config, this.#opts) };
    for (const a of old.authenticators) a.close();
    logger.info(`authentication config ${path} reloaded`);
  }

  /** Logs a rejected version once; `seen` identifies it so a retry does not log again. */
  #reject(seen: string, reason: string) {
    if (seen === this.#seen) return;
    this.#seen = seen;
    this.#opts.logger.error(
      `authentication config not reloaded, the previous one stays in force: ${reason}`,
    );
  }
}

/** A valid configuration, including the rule against `--anonymous-auth`. */
function parse(text: string, opts: AuthenticationConfigReloaderOptions): AuthenticationConfig {
  const config = parseAuthenticationConfig(text, opts.path, opts);
  checkAnonymousFlagConflict(config, { file: opts.path, flagSet: opts.anonymousFlagSet ?? false });
  return config;
}

function buildAuthenticators(
  config: AuthenticationConfig,
  opts: AuthenticationConfigReloaderOptions,
): JwtAuthenticator[] {
  return config.jwt.map((entry) =>
    new JwtAuthenticator(entry, { ...opts.jwt, logger: opts.logger })
  );
}
