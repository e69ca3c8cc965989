/**
 * The data directory and what the server keeps in it outside the store: start-up steps 2
 * (the directory, made and proved writable) and 3 (certificates, the TLS front that checks
 * client certificates, the bearer tokens), and the last one, the admin kubeconfig written once
 * the server listens.
 */

import { ensureAdminToken, ensurePki, type Pki, writeKubeconfig } from "../../certificates/mod.ts";
import { ADMIN_GROUP, ADMIN_USER, type Logger, silentLogger } from "../../api/mod.ts";
import { tightenModes } from "../../storage/mod.ts";
import type { UserInfo } from "../context.ts";
import { prepareDataDir } from "../data_dir.ts";
import { createTlsFront, type TlsFront } from "../tls_front.ts";
import type { Configuration } from "./configuration.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";

/**
 * The data directory, created and proved writable (else a ConfigError naming `--data-dir`);
 * a temporary one when none is given, removed when the server closes.
 */
export async function openDataDir(
  opts: StartOptions,
  logger: Logger,
  resources: OpenResources,
): Promise<string> {
  const dataDir = opts.dataDir ?? await Deno.makeTempDir({ prefix: "platform-" });
  if (opts.dataDir === undefined) {
    resources.add(
      "the temporary data directory",
      () => Deno.remove(dataDir, { recursive: true }).catch(() => {}),
    );
  }
  await prepareDataDir(dataDir);
  tightenModes(dataDir, logger, { entries: ["pki", "store", "admin.kubeconfig"] });
  return dataDir;
}

/** The certificates and credentials a server starts with. */
export interface Credentials {
  pki: Pki;
  /** The PKI as it is now: renews the serving certificate when due, re-reads a given one. */
  currentPki(): Promise<Pki>;
  /** With client-certificate authentication: the TLS front that asks for them. */
  front?: TlsFront;
  /** The admin bearer token (user platform-admin, group system:masters). */
  adminToken: string;
  /** The bearer tokens that authenticate: `--token-auth-file`'s and the admin token. */
  tokens: Map<string, UserInfo>;
}

/** Makes or reads the certificates and the admin token in `dataDir`. */
export async function prepareCredentials(
  opts: StartOptions,
  dataDir: string,
  hostname: string,
  config: Configuration,
  logger: Logger,
): Promise<Credentials> {
  const pkiOptions = pkiOptionsOf(opts, dataDir, hostname);
  const pki = await ensurePki({ ...pkiOptions, logger });
  // Client certificates: TLS ends in a node:tls front that asks for them (tls_front.ts);
  // made before anything opens, as a bad --client-ca-file fails the start.
  const front = await createTlsFront({
    clientCertAuth: opts.clientCertAuth,
    clientCAFile: opts.clientCAFile,
    clusterCAPem: pki.caCertPem,
    certPem: pki.servingCertPem,
    keyPem: pki.servingKeyPem,
    logger,
  });
  const adminToken = await ensureAdminToken(dataDir);
  const tokens = new Map<string, UserInfo>();
  for (const [token, user] of config.staticTokens ?? []) tokens.set(token, user);
  tokens.set(adminToken, { username: ADMIN_USER, uid: ADMIN_USER, groups: [ADMIN_GROUP] });
  return {
    pki,
    currentPki: () => ensurePki({ ...pkiOptions, logger: silentLogger }),
    front,
    adminToken,
    tokens,
  };
}

/** What `ensurePki` is given for this server: its data directory, names and certificate files. */
export function pkiOptionsOf(opts: StartOptions, dataDir: string, hostname: string) {
  return {
    dataDir,
    sans: opts.tlsSANs ?? [],
    bindAddress: hostname,
    tlsCertFile: opts.tlsCertFile,
    tlsPrivateKeyFile: opts.tlsPrivateKeyFile,
    renewalClock: opts.clock,
  };
}

/** Writes `<dataDir>/admin.kubeconfig` for the admin token; returns its path. */
export async function writeAdminKubeconfig(
  dataDir: string,
  hostname: string,
  port: number,
  credentials: Credentials,
): Promise<string> {
  const path = `${dataDir}/admin.kubeconfig`;
  await writeKubeconfig({
    path,
    server: `https://${connectHost(hostname)}:${port}`,
    caCertPem: credentials.pki.servingCaPem,
    token: credentials.adminToken,
    user: ADMIN_USER,
    clusterName: "platform",
    contextName: "platform",
  });
  return path;
}

/** A wildcard bind address is reached through loopback. */
function connectHost(bind: string): string {
  if (bind === "0.0.0.0" || bind === "") return "127.0.0.1";
  if (bind === "::" || bind === "[::]") return "[::1]";
  return bind.includes(":") ? `[${bind}]` : bind;
}
