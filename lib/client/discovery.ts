/**
 * Resource types as kubectl finds them: discovery (`/api`, `/api/v1`, `/apis` and each
 * group's preferred version) lists the resources; a TYPE on the command line matches a
 * resource's plural, singular, short name or kind, case-insensitively, optionally qualified
 * as `type.group` or `type.version.group`. The core group is searched first, then the groups
 * in the server's order.
 *
 * @module
 */

import { canonicalGroup } from "../api/mod.ts";
import type { ClientConnection } from "./connection.ts";
import { serverError } from "./errors.ts";

/** One resource of discovery. */
export interface ApiResource {
  group: string;
  version: string;
  /** The plural name, e.g. `configmaps`. */
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  /** Subresources the server lists for it (`status`, `scale`). */
  subresources: string[];
}

/** A TYPE the server does not have, or a kind no resource serves. */
export class UnknownTypeError extends Error {
  override name = "UnknownTypeError";
}

/** The resources a server serves, read once. */
export class Discovery {
  readonly #conn: ClientConnection;
  #resources?: Promise<ApiResource[]>;

  constructor(conn: ClientConnection) {
    this.#conn = conn;
  }

  /** Every resource of the preferred version of each group, the core group first. */
  resources(): Promise<ApiResource[]> {
    return this.#resources ??= this.#load();
  }

  /**
   * The resource TYPE names.
   *
   * @throws {UnknownTypeError} `the server doesn't have a resource type "foos"`.
   */
  async find(type: string): Promise<ApiResource> {
    const all = await this.resources();
    const lower = type.toLowerCase();
    const candidates: { name: string; group?: string; version?: string }[] = [{ name: lower }];
    const parts = lower.split(".");
    for (let i = 1; i < parts.length; i++) {
      const name = parts.slice(0, i).join(".");
      const rest = parts.slice(i).join(".");
      candidates.push({ name, group: rest });
      if (i + 1 < parts.length) {
        candidates.push({ name, version: parts[i], group: parts.slice(i + 1).join(".") });
      }
    }
    for (const c of candidates) {
      const hit = all.find((r) =>
        (c.group === undefined || canonicalGroup(r.group) === canonicalGroup(c.group)) &&
        (c.version === undefined || r.version === c.version) && names(r).includes(c.name)
      );
      if (hit) return hit;
    }
    throw new UnknownTypeError(`the server doesn't have a resource type "${type}"`);
  }

  /**
   * The resource serving `kind` at `apiVersion`.
   *
   * @throws {UnknownTypeError} `no matches for kind "X" in version "g/v"`.
   */
  async forKind(apiVersion: string, kind: string): Promise<ApiResource> {
    const slash = apiVersion.indexOf("/");
    const group = slash < 0 ? "" : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const all = await this.#allVersions(group, version);
    const hit = all.find((r) => r.kind === kind);
    if (!hit) {
      throw new UnknownTypeError(`no matches for kind "${kind}" in version "${apiVersion}"`);
    }
    return hit;
  }

  async #allVersions(group: string, version: string): Promise<ApiResource[]> {
    const preferred = (await this.resources()).filter((r) =>
      canonicalGroup(r.group) === canonicalGroup(group) && r.version === version
    );
    if (preferred.length > 0) return preferred;
    // Not the preferred version: ask that version itself.
    const path = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
    return await this.#list(path, group, version, { missingOk: true });
  }

  async #load(): Promise<ApiResource[]> {
    const core = await this.#get("/api") as { versions?: string[] } | undefined;
    const coreVersion = core?.versions?.[0] ?? "v1";
    const groups = await this.#get("/apis") as {
      groups?: {
        name: string;
        preferredVersion?: { version: string };
        versions: { version: string }[];
      }[];
    };
    const lists = await Promise.all([
      this.#list(`/api/${coreVersion}`, "", coreVersion),
      ...(groups?.groups ?? []).map((g) => {
        const version = g.preferredVersion?.version ?? g.versions[0]?.version;
        return this.#list(`/apis/${g.name}/${version}`, g.name, version, { missingOk: true });
      }),
    ]);
    return lists.flat();
  }

  async #list(
    path: string,
    group: string,
    version: string,
    opts: { missingOk?: boolean } = {},
  ): Promise<ApiResource[]> {
    const list = await this.#get(path, opts) as {
      resources?: {
        name: string;
        singularName?: string;
        kind: string;
        namespaced: boolean;
        shortNames?: string[];
      }[];
    } | undefined;
    const out: ApiResource[] = [];
    for (const r of list?.resources ?? []) {
      const slash = r.name.indexOf("/");
      if (slash >= 0) {
        const parent = out.find((p) => p.resource === r.name.slice(0, slash));
        parent?.subresources.push(r.name.slice(slash + 1));
        continue;
      }
      out.push({
        group,
        version,
        resource: r.name,
        singular: r.singularName || r.kind.toLowerCase(),
        kind: r.kind,
        namespaced: r.namespaced,
        shortNames: r.shortNames ?? [],
        subresources: [],
      });
    }
    return out;
  }

  async #get(path: string, opts: { missingOk?: boolean } = {}): Promise<unknown> {
    const res = await this.#conn.fetch(path, { headers: { Accept: "application/json" } });
    if (res.status === 404 && opts.missingOk) {
      await res.body?.cancel();
      return undefined;
    }
    if (!res.ok) throw await serverError(res);
    return await res.json();
  }
}

function names(r: ApiResource): string[] {
  return [
    r.resource,
    r.singular,
    r.kind.toLowerCase(),
    ...r.shortNames.map((s) => s.toLowerCase()),
  ];
}

/** The path of an object of `r` (and of its subresource). */
export function objectPath(
  r: ApiResource,
  opts: { namespace: string; name: string; subresource?: string },
): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespaced ? `/namespaces/${encodeURIComponent(opts.namespace)}` : "";
  const sub = opts.subresource ? `/${opts.subresource}` : "";
  return `${base}${ns}/${r.resource}/${encodeURIComponent(opts.name)}${sub}`;
}
