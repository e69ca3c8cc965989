/**
 * `platform check-config FILE… [--print-defaults]`: validates configuration files of any kind
 * spec 03 names, by each document's apiVersion and kind, and prints the problems as kube's
 * field errors (`FILE: leaderElection.leaseDuration: Invalid value: "0s": must be greater
 * than zero`), or with `--print-defaults` the defaulted objects as YAML.
 *
 * The kinds of `lib/config/kinds/` (controller managers, leader migration, scheduler and its
 * plugin arguments, the proxy parts) are checked there; the server's own kinds go to the
 * loaders the server uses at start (lib/config, lib/auth, lib/admission, lib/audit,
 * lib/encryption), so a file passes here exactly when the server would take it.
 *
 * Exit status: 0 when every file is valid, 1 when one is missing, unreadable, malformed or
 * invalid, 2 for a usage error.
 *
 * @module
 */

import { basename, dirname, resolve } from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import {
  checkKindDocument,
  CONFIG_KINDS,
  ConfigError,
  findConfigKind,
  loadEgressSelectorConfig,
  loadServerConfig,
  loadTracingConfig,
  osReason,
} from "../config/mod.ts";
import {
  loadAuthenticationConfig,
  loadAuthorizationConfig,
  SERVICE_ACCOUNT_ISSUER,
} from "../auth/mod.ts";
import { loadAdmissionSettings } from "../admission/mod.ts";
import { loadAuditPolicy } from "../audit/mod.ts";
import { loadEncryptionConfig } from "../encryption/mod.ts";

const USAGE = `Usage: platform check-config FILE... [--print-defaults]

Validates configuration files by apiVersion and kind (every document of a multi-document
file) and prints each problem as FILE: <field path>: <message>.

  --print-defaults   print each valid document with its defaults applied (YAML)

Exit status: 0 all valid, 1 a file is missing, malformed or invalid, 2 usage error.`;

/** The server's own kinds, checked by the loader the server uses for each at start. */
const SERVER_KINDS: Record<string, (path: string) => Promise<unknown>> = {
  ServerConfiguration: (path) => loadServerConfig(["--config", path]),
  AuthenticationConfiguration: (path) =>
    loadAuthenticationConfig(path, { disallowedIssuers: [SERVICE_ACCOUNT_ISSUER] }),
  AuthorizationConfiguration: (path) => loadAuthorizationConfig(path),
  AdmissionConfiguration: (path) => loadAdmissionSettings({ configFile: path }),
  EgressSelectorConfiguration: (path) => loadEgressSelectorConfig(path),
  TracingConfiguration: (path) => loadTracingConfig(path),
  EncryptionConfiguration: (path) => loadEncryptionConfig(path),
  Policy: (path) => loadAuditPolicy(path),
  // The admission plugins' own files, as an AdmissionConfiguration naming them reads them.
  Configuration: (path) => loadAdmissionPluginFile("EventRateLimit", path),
  WebhookAdmissionConfiguration: (path) =>
    loadAdmissionPluginFile("ValidatingAdmissionWebhook", path),
};

/**
 * Check a plugin's configuration file (`path`) through an AdmissionConfiguration that names
 * it, written to a temporary file; the message names the plugin's file alone.
 */
async function loadAdmissionPluginFile(plugin: string, path: string): Promise<void> {
  const file = resolve(path);
  const wrapper = await Deno.makeTempFile({ prefix: "platform-admission-", suffix: ".yaml" });
  await Deno.writeTextFile(
    wrapper,
    JSON.stringify({
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "AdmissionConfiguration",
      plugins: [{ name: plugin, path: file }],
    }),
  );
  try {
    await loadAdmissionSettings({ configFile: wrapper });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const prefix = `${wrapper}: plugins[0].path: ${JSON.stringify(file)}: `;
    const message = err.message.startsWith(prefix)
      ? err.message.slice(prefix.length)
      : err.message.replaceAll(wrapper, "the admission configuration");
    throw new ConfigError(`${path}: ${message}`);
  } finally {
    await Deno.remove(wrapper).catch(() => {});
  }
}

/** Every kind the command knows, for the message about one it does not. */
const ALL_KINDS = [...CONFIG_KINDS.map((k) => k.kind), ...Object.keys(SERVER_KINDS)];

/** Whether `args` (after `check-config`) ask for this command rather than the flag check. */
export function isCheckConfigFiles(args: readonly string[]): boolean {
  return args.includes("--print-defaults") || (args.length > 0 && !args[0].startsWith("-"));
}

/**
 * Run the command on the arguments after `check-config`; resolves to the exit status.
 *
 * @example
 * ```ts
 * Deno.exit(await runCheckConfig(["scheduler.yaml", "--print-defaults"]));
 * ```
 */
export async function runCheckConfig(args: readonly string[]): Promise<number> {
  const files: string[] = [];
  let printDefaults = false;
  for (const arg of args) {
    if (arg === "--print-defaults") printDefaults = true;
    else if (arg === "-h" || arg === "--help") {
      console.log(USAGE);
      return 0;
    } else if (arg.startsWith("-")) {
      console.error(`platform check-config: unknown flag ${JSON.stringify(arg)}\n\n${USAGE}`);
      return 2;
    } else files.push(arg);
  }
  if (files.length === 0) {
    console.error(`platform check-config: no file given\n\n${USAGE}`);
    return 2;
  }
  let status = 0;
  const printed: string[] = [];
  for (const file of files) {
    const result = await checkFile(file);
    for (const line of result.errors) console.error(line);
    if (result.errors.length > 0) {
      status = 1;
      continue;
    }
    if (printDefaults) printed.push(...result.defaulted.map((d) => stringify(d)));
    else console.log(`${file}: valid (${result.kinds.join(", ")})`);
  }
  if (printDefaults && printed.length > 0) console.log(printed.join("---\n").trimEnd());
  return status;
}

interface FileResult {
  errors: string[];
  kinds: string[];
  defaulted: unknown[];
}

/** Check every document of one file. */
async function checkFile(file: string): Promise<FileResult> {
  const result: FileResult = { errors: [], kinds: [], defaulted: [] };
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    result.errors.push(`${file}: cannot read: ${osReason(err)}`);
    return result;
  }
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [];
  for (const doc of list) {
    const e = doc.errors[0];
    if (e === undefined) continue;
    const pos = e.linePos?.[0];
    const loc = pos ? `:${pos.line}:${pos.col}` : "";
    const reason = e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    result.errors.push(`${file}${loc}: invalid YAML: ${reason}`);
    return result;
  }
  let contents: unknown[];
  try {
    contents = list.map((d) => d.toJS() as unknown).filter((d) => d !== null && d !== undefined);
  } catch (err) {
    // Aliases past the expansion limit, say.
    result.errors.push(`${file}: invalid YAML: ${(err as Error).message.split("\n")[0]}`);
    return result;
  }
  if (contents.length === 0) {
    result.errors.push(`${file}: the file is empty: expected a document with apiVersion and kind`);
    return result;
  }
  for (const [i, data] of contents.entries()) {
    const label = contents.length > 1 ? `${file} (document ${i + 1})` : file;
    const own = contents.length === 1 ? file : undefined;
    await checkDocument(data, { label, file, own }, result);
  }
  return result;
}

/** Check one document; `own` is the file's path when the document is the whole file. */
async function checkDocument(
  data: unknown,
  where: { label: string; file: string; own?: string },
  result: FileResult,
): Promise<void> {
  const { label } = where;
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    result.errors.push(
      `${label}: expected a mapping with apiVersion and kind, got ${
        Array.isArray(data) ? "a list" : JSON.stringify(data)
      }`,
    );
    return;
  }
  const doc = data as Record<string, unknown>;
  const problems = ["apiVersion", "kind"].flatMap((f) =>
    doc[f] === undefined || doc[f] === null || doc[f] === ""
      ? [`${label}: ${f}: Required value`]
      : typeof doc[f] !== "string"
      ? [`${label}: ${f}: Invalid value: ${JSON.stringify(doc[f])}: must be a string`]
      : []
  );
  if (problems.length > 0) {
    result.errors.push(...problems);
    return;
  }
  const kind = doc.kind as string;
  if (findConfigKind(kind)) {
    const checked = checkKindDocument(doc);
    result.errors.push(...checked.errors.map((e) => `${label}: ${e}`));
    if (checked.errors.length === 0) {
      result.kinds.push(kind);
      result.defaulted.push(checked.defaulted);
    }
    return;
  }
  const loader = SERVER_KINDS[kind];
  if (loader === undefined) {
    result.errors.push(
      `${label}: kind: Unsupported value: ${JSON.stringify(kind)}: supported values: ` +
        ALL_KINDS.map((k) => JSON.stringify(k)).join(", "),
    );
    return;
  }
  const problem = await loadServerKind(loader, doc, where);
  if (problem !== undefined) {
    result.errors.push(problem.startsWith(label) ? problem : `${label}: ${problem}`);
    return;
  }
  result.kinds.push(kind);
  // The server applies its own kinds' defaults as it starts: they print as written.
  result.defaulted.push(doc);
}

/**
 * Run a server kind's loader on the document: on the file itself when it is the whole file,
 * else on a copy beside it (so relative paths in it resolve as they would). Resolves to the
 * loader's one-line message, or undefined when the document is valid.
 */
async function loadServerKind(
  loader: (path: string) => Promise<unknown>,
  doc: Record<string, unknown>,
  where: { label: string; file: string; own?: string },
): Promise<string | undefined> {
  let path = where.own;
  let temporary: string | undefined;
  if (path === undefined) {
    temporary = await Deno.makeTempFile({
      dir: dirname(where.file),
      prefix: `.${basename(where.file)}.`,
      suffix: ".yaml",
    }).catch(() => Deno.makeTempFile({ suffix: ".yaml" }));
    await Deno.writeTextFile(temporary, JSON.stringify(doc));
    path = temporary;
  }
  try {
    await loader(path);
    return undefined;
  } catch (err) {
    // A ConfigError is the loader's one line; anything else is said in one line too.
    const message = err instanceof ConfigError
      ? err.message
      : `cannot be used: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`;
    return temporary === undefined ? message : message.replaceAll(temporary, where.label);
  } finally {
    if (temporary !== undefined) await Deno.remove(temporary).catch(() => {});
  }
}
