/**
 * What `-f`, `-k` and `-p`/`--patch-file` name, read as kubectl reads them: a file (`-` is
 * stdin), a directory (its `.json`, `.yaml` and `.yml` files, sorted; subdirectories with
 * `-R`), or an http(s) URL; YAML streams of several documents and `List` objects give several
 * objects; `-k DIR` runs `kustomize build DIR`. A patch is JSON or YAML.
 *
 * @module
 */

import { parseAllDocuments, parseDocument } from "yaml";
import { CommandError } from "./errors.ts";

/** An object read from a file, with where it came from (for messages). */
export interface SourceObject {
  obj: Record<string, unknown>;
  source: string;
}

/** Reads an http(s) URL (with the connection's TLS settings). */
export type UrlReader = (url: string) => Promise<string>;

const EXTENSIONS = [".json", ".yaml", ".yml"];

/**
 * The objects of every `-f` value.
 *
 * @throws {CommandError} `the path "x" does not exist`, `unable to decode "x": ...`.
 */
export async function readFilenames(
  paths: string[],
  opts: { recursive: boolean; readUrl: UrlReader; readStdin?: () => Promise<string> },
): Promise<SourceObject[]> {
  const out: SourceObject[] = [];
  for (const path of paths) {
    if (/^https?:\/\//.test(path)) {
      out.push(...decodeObjects(await opts.readUrl(path), path));
      continue;
    }
    if (path === "-") {
      const text = await (opts.readStdin ?? readStdin)();
      out.push(...decodeObjects(text, "STDIN"));
      continue;
    }
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch {
      throw new CommandError(`the path "${path}" does not exist`);
    }
    if (info.isDirectory) {
      for (const file of await filesOf(path, opts.recursive)) {
        out.push(...decodeObjects(await Deno.readTextFile(file), file));
      }
    } else {
      out.push(...decodeObjects(await readText(path), path));
    }
  }
  return out;
}

/**
 * The objects `kustomize build dir` prints.
 *
 * @throws {CommandError} when kustomize is not installed or fails.
 */
export async function readKustomization(dir: string): Promise<SourceObject[]> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("kustomize", {
      args: ["build", dir],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new CommandError(
        "-k needs the kustomize program, and none is installed (no kustomize on PATH)",
      );
    }
    throw new CommandError(`cannot run kustomize: ${(err as Error).message}`);
  }
  if (!out.success) {
    const stderr = new TextDecoder().decode(out.stderr).trim().split("\n").join(" | ");
    throw new CommandError(`kustomize build ${dir} failed: ${stderr}`);
  }
  return decodeObjects(new TextDecoder().decode(out.stdout), dir);
}

/**
 * The patch of `-p` or `--patch-file`, parsed (JSON or YAML).
 *
 * @throws {CommandError} `unable to parse "<patch>": <reason>`.
 */
export async function readPatch(opts: { patch?: string; patchFile?: string }): Promise<unknown> {
  if (opts.patch !== undefined && opts.patchFile !== undefined) {
    throw new CommandError("--patch and --patch-file cannot be given together");
  }
  let text = opts.patch;
  if (opts.patchFile !== undefined) {
    try {
      text = await Deno.readTextFile(opts.patchFile);
    } catch (err) {
      throw new CommandError(
        `unable to read patch file: open ${opts.patchFile}: ${osReason(err)}`,
      );
    }
  }
  if (text === undefined || text.trim() === "") {
    throw new CommandError(
      "must specify --patch or --patch-file containing the contents of the patch",
    );
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    const reason = doc.errors[0].message.split("\n")[0];
    throw new CommandError(`unable to parse ${JSON.stringify(text)}: ${reason}`);
  }
  return doc.toJS();
}

/** The objects of one file's text: YAML documents, JSON, `List`s expanded. */
export function decodeObjects(text: string, source: string): SourceObject[] {
  const docs = parseAllDocuments(text);
  const out: SourceObject[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0) {
      throw new CommandError(
        `error parsing ${source}: ${doc.errors[0].message.split("\n")[0]}`,
      );
    }
    const value = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== "object" || Array.isArray(value)) {
      throw new CommandError(`unable to decode "${source}": not an object`);
    }
    const obj = value as Record<string, unknown>;
    if (!obj.kind) {
      throw new CommandError(`unable to decode "${source}": Object 'Kind' is missing`);
    }
    if (String(obj.kind).endsWith("List") && Array.isArray(obj.items)) {
      for (const item of obj.items) out.push({ obj: item as Record<string, unknown>, source });
      continue;
    }
    out.push({ obj, source });
  }
  return out;
}

async function filesOf(dir: string, recursive: boolean): Promise<string[]> {
  const entries: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir.replace(/\/+$/, "")}/${e.name}`;
    if (e.isDirectory) {
      if (recursive) entries.push(...await filesOf(path, recursive));
    } else if (EXTENSIONS.some((x) => e.name.endsWith(x))) {
      entries.push(path);
    }
  }
  return entries.sort();
}

async function readText(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    throw new CommandError(`cannot read "${path}": ${osReason(err)}`);
  }
}

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

function osReason(err: unknown): string {
  if (err instanceof Deno.errors.NotFound) return "no such file or directory";
  if (err instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (err instanceof Deno.errors.IsADirectory) return "is a directory";
  return (err as Error).message.replace(/ \(os error \d+\).*$/s, "");
}
