/**
 * `platform patch (-f FILENAME | TYPE NAME) [-p PATCH | --patch-file FILE]`, as kubectl patch
 * runs: for each object named, GET it, then PATCH it (`fieldManager`, `dryRun=All` with
 * `--dry-run=server`), or with `--dry-run=client` apply the patch to what was read and send
 * nothing; with `--local`, patch the files' content and talk to no server. Each object is
 * printed with `-o`, else as `<kind>[.<group>]/<name> patched`, `patched (no change)` when the
 * result equals what was read, with ` (dry run)` or ` (server dry run)` after it.
 *
 * Exit code 0, or 1 with the error as kubectl prints it (`Error from server (NotFound): ...`).
 *
 * @module
 */

import { jsonEqual } from "../api/mod.ts";
import {
  defaultConfigSources,
  ExecCredentialError,
  KubeconfigError,
  loadKubeconfig,
  resolveClientSettings,
} from "../kubeconfig/mod.ts";
import { type OutputFormat, parseOutputFormat, PrintError, printObject } from "../printers/mod.ts";
import { ClientConnection } from "./connection.ts";
import { Discovery, objectPath, UnknownTypeError } from "./discovery.ts";
import { CommandError, ServerError, serverError } from "./errors.ts";
import { type ParsedFlags, parseFlags } from "./flags.ts";
import { readFilenames, readKustomization, readPatch, type SourceObject } from "./inputs.ts";
import {
  isCustomGroup,
  PATCH_CONTENT_TYPES,
  patchLocally,
  type PatchType,
  strategicRefused,
} from "./local_patch.ts";
import { connectionOverrides, parseRequestTimeout } from "./options.ts";
import { ALL_PATCH_FLAGS, patchHelp } from "./patch_flags.ts";
import { ConnectionError, exchange } from "./transport.ts";

/** Where the command writes, and what it knows of itself. */
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The client version `--version` prints and `--match-server-version` compares. */
  clientVersion: string;
}

const PATCH_TYPES: PatchType[] = ["json", "merge", "strategic"];
const SUBRESOURCES = ["status", "scale"];
const DRY_RUNS = ["none", "server", "client"];

/** The whole command: parse, patch, print. Resolves with the exit code; never throws. */
export async function runPatchCommand(args: string[], io: CommandIO): Promise<number> {
  let warnings = 0;
  try {
    const flags = parseFlags(args, ALL_PATCH_FLAGS);
    if (flags.values.get("help")) {
      io.stdout(patchHelp());
      return 0;
    }
    if (flags.values.get("version")) {
      io.stdout(`Client Version: ${io.clientVersion}\n`);
      return 0;
    }
    const onWarning = (text: string) => {
      warnings++;
      io.stderr(`Warning: ${text}\n`);
    };
    const failures = await patch(flags, io, onWarning);
    if (flags.values.get("warnings-as-errors") && warnings > 0) {
      io.stderr(`error: ${warnings} warning${warnings === 1 ? "" : "s"} received\n`);
      return 1;
    }
    return failures > 0 ? 1 : 0;
  } catch (err) {
    // A template that failed: kubectl still prints what it wrote before the failure.
    if (err instanceof PrintError && err.stdout) io.stdout(err.stdout);
    io.stderr(errorLine(err));
    return 1;
  }
}

/** The line kubectl prints for an error. */
function errorLine(err: unknown): string {
  if (err instanceof ServerError) return `${err.printed}\n`;
  if (err instanceof ConnectionError) return `${err.message}\n`;
  if (err instanceof PrintError) {
    return `error: ${err.message}${err.message.endsWith("\n") ? "" : "\n"}`;
  }
  if (
    err instanceof CommandError || err instanceof KubeconfigError ||
    err instanceof ExecCredentialError || err instanceof UnknownTypeError
  ) {
    return `error: ${err.message}\n`;
  }
  // Anything else is still one line: the client never prints a stack.
  return `error: ${err instanceof Error ? err.message : String(err)}\n`;
}

interface PatchPlan {
  type: PatchType;
  patch: unknown;
  body: string;
  dryRun: string;
  subresource?: string;
  fieldManager: string;
  format?: OutputFormat;
  printOpts: { allowMissingTemplateKeys: boolean; showManagedFields: boolean };
}

/** Patches every object named; resolves with how many failed (each already printed). */
async function patch(
  flags: ParsedFlags,
  io: CommandIO,
  onWarning: (text: string) => void,
): Promise<number> {
  const v = flags.values;
  const str = (name: string) => v.get(name) as string | undefined;
  const type = (str("type") ?? "strategic") as PatchType;
  if (!PATCH_TYPES.includes(type)) {
    throw new CommandError(`--type must be one of [json merge strategic], not "${type}"`);
  }
  const dryRun = str("dry-run") ?? "none";
  if (!DRY_RUNS.includes(dryRun)) {
    throw new CommandError(
      `Invalid dry-run value (${dryRun}). Must be "none", "server", or "client".`,
    );
  }
  const subresource = str("subresource");
  if (subresource !== undefined && !SUBRESOURCES.includes(subresource)) {
    throw new CommandError(
      `invalid subresource value: "${subresource}". Must be one of [status scale]`,
    );
  }
  const files = (v.get("filename") as string[] | undefined) ?? [];
  const kustomize = str("kustomize");
  const local = v.get("local") === true;
  if (files.length > 0 && kustomize !== undefined) {
    throw new CommandError("only one of -f or -k can be specified");
  }
  if (kustomize !== undefined && v.get("recursive")) {
    throw new CommandError("the -k flag can't be used together with -R");
  }
  if (local && flags.positionals.length > 0) {
    throw new CommandError("cannot specify --local and server resources");
  }
  if ((files.length > 0 || kustomize !== undefined) && flags.positionals.length > 0) {
    throw new CommandError("cannot give TYPE NAME together with -f or -k");
  }
  if (local && files.length === 0 && kustomize === undefined) {
    throw new CommandError("--local needs -f or -k: the objects to patch come from files");
  }
  const requestTimeoutMs = parseRequestTimeout(str("request-timeout"));
  const format = outputFormat(str("output"), str("template"));
  const patchValue = await readPatch({ patch: str("patch"), patchFile: str("patch-file") });
  const plan: PatchPlan = {
    type,
    patch: patchValue,
    body: JSON.stringify(patchValue),
    dryRun,
    subresource,
    fieldManager: str("field-manager") ?? "client-patch",
    format,
    printOpts: {
      allowMissingTemplateKeys: v.get("allow-missing-template-keys") !== false,
      showManagedFields: v.get("show-managed-fields") === true,
    },
  };

  const overrides = connectionOverrides(flags);
  // The server connection is made only when needed: --local talks to none.
  let conn: ClientConnection | undefined;
  const connect = async () => {
    if (conn) return conn;
    const config = await loadKubeconfig(defaultConfigSources(overrides.configFile));
    conn = new ClientConnection(await resolveClientSettings(config, overrides), {
      requestTimeoutMs,
      onWarning,
    });
    if (v.get("match-server-version")) await matchServerVersion(conn, io.clientVersion);
    return conn;
  };
  const readUrl = async (url: string) => {
    // Files by URL: the connection's TLS settings when there is a configuration, no credentials.
    const c = local ? undefined : await connect();
    const s = c?.settings;
    const res = await exchange(new URL(url), {
      method: "GET",
      headers: {},
      timeoutMs: requestTimeoutMs,
    }, { caPem: s?.caPem, insecure: s?.insecureSkipTlsVerify, serverName: s?.tlsServerName });
    if (!res.ok) {
      throw new CommandError(
        `unable to read URL "${url}", server reported ${res.status} ${res.statusText}, status code=${res.status}`,
      );
    }
    return await res.text();
  };

  let sources: SourceObject[] | undefined;
  if (files.length > 0) {
    sources = await readFilenames(files, { recursive: v.get("recursive") === true, readUrl });
  } else if (kustomize !== undefined) {
    sources = await readKustomization(kustomize);
  }
  if (sources && sources.length === 0) throw new CommandError("no objects passed to patch");

  if (local) {
    for (const { obj } of sources!) {
      const patched = patchLocally(obj, plan.patch, type);
      await print(io, patched, { changed: !jsonEqual(obj, patched), plan, local: true });
    }
    return 0;
  }

  const c = await connect();
  const discovery = new Discovery(c);
  const targets = await resolveTargets(flags.positionals, sources, discovery, {
    namespace: c.settings.namespace,
    explicit: overrides.namespace !== undefined,
  });
  let failures = 0;
  for (const target of targets) {
    try {
      await patchOne(c, target, plan, io);
    } catch (err) {
      if (!(err instanceof ServerError) && !(err instanceof CommandError)) throw err;
      io.stderr(errorLine(err));
      failures++;
    }
  }
  return failures;
}

interface Target {
  path: string;
  /** For messages: `configmaps.` or `widgets.example.com`. */
  group: string;
  resource: string;
}

async function resolveTargets(
  positionals: string[],
  sources: SourceObject[] | undefined,
  discovery: Discovery,
  ns: { namespace: string; explicit: boolean },
): Promise<Target[]> {
  const namespace = ns.namespace;
  if (sources) {
    const out: Target[] = [];
    for (const { obj, source } of sources) {
      const meta = (obj.metadata ?? {}) as Record<string, unknown>;
      const name = String(meta.name ?? "");
      if (!name) throw new CommandError(`${source}: the object has no metadata.name`);
      let r;
      try {
        r = await discovery.forKind(String(obj.apiVersion ?? ""), String(obj.kind));
      } catch (err) {
        if (!(err instanceof UnknownTypeError)) throw err;
        throw new CommandError(
          `resource mapping not found for name: "${name}" namespace: "${meta.namespace ?? ""}" ` +
            `from "${source}": ${err.message}`,
        );
      }
      if (ns.explicit && r.namespaced && meta.namespace && meta.namespace !== namespace) {
        throw new CommandError(
          `the namespace from the provided object "${meta.namespace}" does not match the ` +
            `namespace "${namespace}". You must pass '--namespace=${meta.namespace}' to perform ` +
            "this operation.",
        );
      }
      const objectNs = r.namespaced ? String(meta.namespace ?? namespace) : "";
      out.push({
        path: objectPath(r, { namespace: objectNs, name }),
        group: r.group,
        resource: r.resource,
      });
    }
    return out;
  }
  let type: string;
  let name: string;
  if (positionals.length === 1 && positionals[0].includes("/")) {
    [type, name] = splitOnce(positionals[0]);
  } else if (positionals.length === 2 && !positionals[0].includes("/")) {
    [type, name] = positionals;
  } else if (positionals.length === 0) {
    throw new CommandError("You must provide one or more resources by argument or filename.");
  } else {
    throw new CommandError(
      "patch takes one object: TYPE NAME or TYPE/NAME (got " + JSON.stringify(positionals) + ")",
    );
  }
  if (!name) {
    throw new CommandError(`arguments in resource/name form must have a single resource and name`);
  }
  const r = await discovery.find(type);
  return [{
    path: objectPath(r, { namespace, name }),
    group: r.group,
    resource: r.resource,
  }];
}

async function patchOne(
  conn: ClientConnection,
  target: Target,
  plan: PatchPlan,
  io: CommandIO,
): Promise<void> {
  if (plan.type === "strategic" && isCustomGroup(target.group)) {
    throw strategicRefused(`${target.resource}.${target.group}`);
  }
  const path = plan.subresource ? `${target.path}/${plan.subresource}` : target.path;
  const got = await conn.fetch(path, { headers: { Accept: "application/json" } });
  if (!got.ok) throw await serverError(got);
  const original = await got.json() as Record<string, unknown>;
  if (plan.dryRun === "client") {
    const patched = patchLocally(original, plan.patch, plan.type);
    await print(io, patched, { changed: !jsonEqual(original, patched), plan, local: false });
    return;
  }
  const query = new URLSearchParams({ fieldManager: plan.fieldManager });
  if (plan.dryRun === "server") query.set("dryRun", "All");
  const res = await conn.fetch(`${path}?${query}`, {
    method: "PATCH",
    headers: { "Content-Type": PATCH_CONTENT_TYPES[plan.type], Accept: "application/json" },
    body: plan.body,
  });
  if (!res.ok) throw await serverError(res);
  const patched = await res.json() as Record<string, unknown>;
  await print(io, patched, { changed: !jsonEqual(original, patched), plan, local: false });
}

async function print(
  io: CommandIO,
  obj: Record<string, unknown>,
  how: { changed: boolean; plan: PatchPlan; local: boolean },
): Promise<void> {
  const { plan } = how;
  if (plan.format) {
    let text: string;
    try {
      text = await printObject(obj, plan.format, plan.printOpts);
    } catch (err) {
      if (err instanceof PrintError) throw err;
      // A template file that cannot be read, say.
      throw new CommandError(err instanceof Error ? err.message : String(err));
    }
    io.stdout(text);
    return;
  }
  let op = how.changed ? "patched" : "patched (no change)";
  if (plan.dryRun === "client") op += " (dry run)";
  else if (plan.dryRun === "server") op += " (server dry run)";
  io.stdout(
    `${qualifiedKind(obj)}/${String((obj.metadata as { name?: string })?.name ?? "")} ${op}\n`,
  );
}

/** `-o` and `--template` as one format, as kubectl reads them (`--template` alone: go-template). */
function outputFormat(output?: string, template?: string): OutputFormat | undefined {
  if (!output && !template) return undefined;
  try {
    return parseOutputFormat(output ?? "", template);
  } catch (err) {
    throw new CommandError((err as Error).message);
  }
}

async function matchServerVersion(conn: ClientConnection, clientVersion: string): Promise<void> {
  const res = await conn.fetch("/version", { headers: { Accept: "application/json" } });
  if (!res.ok) throw await serverError(res);
  const server = await res.json() as { gitVersion?: string };
  const majorMinor = (v: string) => /^v?(\d+)\.(\d+)/.exec(v)?.slice(1, 3).join(".") ?? v;
  if (majorMinor(server.gitVersion ?? "") !== majorMinor(clientVersion)) {
    throw new CommandError(
      `server version (${server.gitVersion}) differs from client version (${clientVersion})`,
    );
  }
}

/** `configmap`, `role.rbac.authorization.platform.io`: kubectl's name for the object's kind. */
function qualifiedKind(obj: Record<string, unknown>): string {
  const kind = String(obj.kind ?? "").toLowerCase();
  const apiVersion = String(obj.apiVersion ?? "");
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? kind : `${kind}.${apiVersion.slice(0, slash)}`;
}

function splitOnce(s: string): [string, string] {
  const i = s.indexOf("/");
  return [s.slice(0, i), s.slice(i + 1)];
}
