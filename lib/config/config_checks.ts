/**
 * The checks of a merged configuration that no single field can make: the cross-field rules
 * (a certificate and its key both or neither; one signing CA for every signer or one per
 * signer, not both) and the files and directories the configuration names (readable, a key
 * pair that matches, a CA bundle that parses, a data directory that is one or is absent).
 * Reads only; writes nothing.
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { join } from "node:path";
import { decodePem } from "../api/mod.ts";
import { ConfigError, osReason, quote } from "./config_error.ts";
import { readKeyPair } from "./key_pair.ts";
import { formatDuration } from "./value_parsers.ts";
import { admissionPluginOverlap } from "./admission_plugins.ts";
import { flagOf } from "./config_layers.ts";
import type { Field, PathField } from "./config_file_schema.ts";
import { PER_SIGNER_CA_FIELDS, type ServerConfig } from "./server_config_fields.ts";

/** How messages name the fields of a configuration, by where each was set. */
export interface FieldNaming {
  /** Where a field was set, as a message starts: `--tls-cert-file`, `config.yaml: tlsCertFile`. */
  where(field: Field): string;
  /** The field's value as written (a path before it was resolved), for messages. */
  shown(field: Field): string;
  /** How a message names another field: its field when the file set it, else its flag. */
  named(field: Field): string;
  /** Whether a flag set the field. */
  fromFlags(field: Field): boolean;
}

/**
 * Check the cross-field rules of a merged configuration and the files it points at.
 *
 * @throws {ConfigError} naming the field (flag or file field) at fault.
 */
export async function checkServerConfig(cfg: ServerConfig, naming: FieldNaming): Promise<void> {
  const { where, shown, named, fromFlags } = naming;
  const both = admissionPluginOverlap(cfg.enableAdmissionPlugins, cfg.disableAdmissionPlugins);
  if (both !== undefined) {
    throw new ConfigError(
      `${where("disableAdmissionPlugins")}: ${quote(both)} is also in ` +
        `${named("enableAdmissionPlugins")} (a plugin is enabled or disabled, not both)`,
    );
  }
  const pairs: [PathField, PathField][] = [
    ["tlsCertFile", "tlsPrivateKeyFile"],
    ["clusterSigningCertFile", "clusterSigningKeyFile"],
    ...PER_SIGNER_CA_FIELDS.map(({ cert, key }): [PathField, PathField] => [cert, key]),
  ];
  // As kube: one CA for every signer, or one per signer, not both.
  if (cfg.clusterSigningCertFile !== undefined || cfg.clusterSigningKeyFile !== undefined) {
    const perSigner = PER_SIGNER_CA_FIELDS.flatMap(({ cert, key }) => [cert, key])
      .find((f) => cfg[f] !== undefined);
    if (perSigner !== undefined) {
      throw new ConfigError(
        `${where(perSigner)}: cannot be combined with ${named("clusterSigningCertFile")} and ` +
          `${named("clusterSigningKeyFile")} (give one CA for every signer, or one per signer)`,
      );
    }
  }
  checkLeaderElection(cfg, naming);
  if (cfg.storage === "etcd3" && cfg.etcdServers.length === 0) {
    throw new ConfigError(
      `${where("storage")}: etcd3 needs ${
        fromFlags("storage") ? "--etcd-servers" : "etcdServers"
      } (etcd client URLs)`,
    );
  }
  if (cfg.token !== undefined && cfg.storage !== "etcd3") {
    throw new ConfigError(
      `${where("token")}: only with etcd3 storage (a lone server keeps its secrets in its data ` +
        `directory)`,
    );
  }
  for (const field of ["etcdCAFile", "etcdCertFile", "etcdKeyFile"] as const) {
    const path = cfg[field];
    if (path !== undefined) await checkReadableFile(path, where(field), shown(field));
  }
  if ((cfg.etcdCertFile === undefined) !== (cfg.etcdKeyFile === undefined)) {
    const [given, missing] = cfg.etcdCertFile !== undefined
      ? ["etcdCertFile", "etcdKeyFile"] as const
      : ["etcdKeyFile", "etcdCertFile"] as const;
    const other = fromFlags(given) ? `--${flagOf(missing)}` : missing;
    throw new ConfigError(`${where(given)}: ${other} must be given too`);
  }
  for (const [certField, keyField] of pairs) {
    if ((cfg[certField] === undefined) !== (cfg[keyField] === undefined)) {
      const [given, missing] = cfg[certField] !== undefined
        ? [certField, keyField]
        : [keyField, certField];
      // The missing one is named as the given one was: a flag, or a field of the file.
      const other = fromFlags(given) ? `--${flagOf(missing)}` : missing;
      throw new ConfigError(`${where(given)}: ${other} must be given too`);
    }
  }
  for (const [certField, keyField] of pairs) {
    const certFile = cfg[certField];
    const keyFile = cfg[keyField];
    if (certFile === undefined || keyFile === undefined) continue;
    await readKeyPair(
      { path: certFile, where: where(certField), shown: shown(certField) },
      { path: keyFile, where: where(keyField), shown: shown(keyField) },
    );
  }
  if (cfg.tokenAuthFile !== undefined) {
    await checkReadableFile(cfg.tokenAuthFile, where("tokenAuthFile"), shown("tokenAuthFile"));
  }
  if (cfg.basicAuthFile !== undefined) {
    await checkReadableFile(cfg.basicAuthFile, where("basicAuthFile"), shown("basicAuthFile"));
  }
  for (
    const field of [
      "authenticationConfig",
      "authorizationConfig",
      "admissionControlConfigFile",
      "encryptionProviderConfig",
      "auditPolicyFile",
      "auditWebhookConfigFile",
      "tracingConfigFile",
      "egressSelectorConfigFile",
    ] as const
  ) {
    const path = cfg[field];
    if (path !== undefined) await checkReadableFile(path, where(field), shown(field));
  }
  if (cfg.clientCAFile !== undefined) {
    await checkCertificateBundle(
      cfg.clientCAFile,
      where("clientCAFile"),
      shown("clientCAFile"),
      // The cluster CA is generated on the first start: naming it before then is fine.
      cfg.clientCAFile === join(cfg.dataDir, "pki", "ca.crt"),
    );
  }
  await checkDirectoryOrAbsent(cfg.dataDir, where("dataDir"), shown("dataDir"));
}

/**
 * kube's rules for the leader election durations: the leader gives up before the others may
 * take over (renew deadline < lease duration), and a renewal, retried every retry period with
 * client-go's 1.2 jitter, fits in the renew deadline.
 */
function checkLeaderElection(cfg: ServerConfig, naming: FieldNaming): void {
  const { where } = naming;
  // The other field as it was set: its flag, or its field in the file (a default: its flag).
  const named = (field: Field) => where(field).startsWith("--") ? where(field) : field;
  const lease = cfg.leaderElectLeaseDuration;
  const renew = cfg.leaderElectRenewDeadline;
  const retry = cfg.leaderElectRetryPeriod;
  if (renew >= lease) {
    throw new ConfigError(
      `${where("leaderElectRenewDeadline")}: ${formatDuration(renew)} must be shorter than ` +
        `${named("leaderElectLeaseDuration")} (${formatDuration(lease)})`,
    );
  }
  if (retry * LEADER_ELECTION_JITTER >= renew) {
    throw new ConfigError(
      `${where("leaderElectRetryPeriod")}: ${formatDuration(retry)} is too long: 1.2 times it ` +
        `(client-go's jitter) must be shorter than ${named("leaderElectRenewDeadline")} ` +
        `(${formatDuration(renew)})`,
    );
  }
}

/** client-go's JitterFactor: a retry waits up to 1.2 retry periods more. */
const LEADER_ELECTION_JITTER = 1.2;

async function checkReadableFile(path: string, where: string, shown: string): Promise<void> {
  try {
    const f = await Deno.open(path, { read: true });
    try {
      if (!(await f.stat()).isFile) {
        throw new ConfigError(`${where}: ${quote(shown)} is not a file`);
      }
    } finally {
      f.close();
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${where}: cannot read ${quote(shown)}: ${osReason(err)}`);
  }
}

/**
 * A readable file with at least one parsable PEM `CERTIFICATE` block (a CA bundle). With
 * `absentOk`, a missing file passes.
 */
async function checkCertificateBundle(
  path: string,
  where: string,
  shown: string,
  absentOk: boolean,
): Promise<void> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (absentOk && err instanceof Deno.errors.NotFound) return;
    throw new ConfigError(`${where}: cannot read ${quote(shown)}: ${osReason(err)}`);
  }
  const blocks = decodePem(text).filter((b) => b.type === "CERTIFICATE");
  if (blocks.length === 0) {
    throw new ConfigError(`${where}: ${quote(shown)} has no valid PEM CERTIFICATE block`);
  }
  for (const [i, block] of blocks.entries()) {
    try {
      new x509.X509Certificate(block.der);
    } catch {
      throw new ConfigError(`${where}: certificate ${i + 1} in ${quote(shown)} does not parse`);
    }
  }
}

async function checkDirectoryOrAbsent(path: string, where: string, shown: string) {
  try {
    if (!(await Deno.stat(path)).isDirectory) {
      throw new ConfigError(`${where}: ${quote(shown)} is not a directory`);
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    if (err instanceof Deno.errors.NotFound) return;
    throw new ConfigError(`${where}: cannot use ${quote(shown)}: ${osReason(err)}`);
  }
}
