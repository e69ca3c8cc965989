/**
 * The OpenAPI documents served, built on first use and cached as serialized JSON:
 *
 * - `GET /openapi/v3` -> {@link OpenAPIService.index}: one entry per document with its hashed
 *   URL (`/openapi/v3/api/v1?hash=…`, hash = upper-case hex SHA-512 of the document);
 * - `GET /openapi/v3/<path>` -> {@link OpenAPIService.document}: an OpenAPI 3.0 document per
 *   group-version (`api/v1`, `apis/<group>/<version>`) with every route the server serves for
 *   that group-version and the closure of the schemas they use, plus the small discovery
 *   documents `api`, `apis`, `apis/<group>` and `version`;
 * - `GET /openapi/v2` -> {@link OpenAPIService.v2}: one Swagger 2.0 document for everything.
 *
 * {@link CatalogueOpenAPI} rebuilds the service when the catalogue's definitions change.
 */

import { createHash } from "node:crypto";
import type { Catalogue, ResourceDefinition } from "../../registry/mod.ts";
import type { SchemaSet } from "../../schema/mod.ts";
import type { DocSpec } from "./model.ts";
import { documentSpecs } from "./documents.ts";
import { withDocumentSchemas } from "./extra_schemas.ts";
import { v3Document } from "./v3.ts";
import { v2Document } from "./v2.ts";

export interface OpenAPIDocument {
  /** The serialized JSON document. */
  body: string;
  /** Upper-case hex SHA-512 of `body`: the `hash` of its URL and its ETag. */
  hash: string;
}

export interface OpenAPIIndex {
  paths: Record<string, { serverRelativeURL: string }>;
}

function sha512Hex(text: string): string {
  return createHash("sha512").update(text).digest("hex").toUpperCase();
}

/**
 * Builds and caches the OpenAPI documents for a set of definitions. Rebuild (construct anew)
 * when the definitions change, e.g. when a CRD is added.
 */
export class OpenAPIService {
  readonly #defs: ResourceDefinition[];
  readonly #schemas: SchemaSet;
  #specs: Map<string, DocSpec> | undefined;
  readonly #docs = new Map<string, OpenAPIDocument>();
  #index: OpenAPIIndex | undefined;
  #v2: string | undefined;

  constructor(defs: ResourceDefinition[], schemas: SchemaSet) {
    this.#defs = [...defs];
    this.#schemas = withDocumentSchemas(defs, schemas);
  }

  /** The document paths served under `/openapi/v3/`, sorted. */
  paths(): string[] {
    return [...this.#docSpecs().keys()].sort();
  }

  /** The body of `GET /openapi/v3`. */
  index(): OpenAPIIndex {
    if (!this.#index) {
      const paths: OpenAPIIndex["paths"] = {};
      for (const path of this.paths()) {
        paths[path] = {
          serverRelativeURL: `/openapi/v3/${path}?hash=${this.document(path)!.hash}`,
        };
      }
      this.#index = { paths };
    }
    return this.#index;
  }

  /** The document at `/openapi/v3/<path>` (`api/v1`, `apis/coordination.platform.io/v1`,
   * `api`, `apis`, `version`, …), or undefined when there is none. */
  document(path: string): OpenAPIDocument | undefined {
    const key = path.replace(/^\/+/, "").replace(/^openapi\/v3\/?/, "").replace(/\/+$/, "");
    const cached = this.#docs.get(key);
    if (cached) return cached;
    const spec = this.#docSpecs().get(key);
    if (!spec) return undefined;
    const body = JSON.stringify(v3Document(spec, this.#schemas));
    const doc = { body, hash: sha512Hex(body) };
    this.#docs.set(key, doc);
    return doc;
  }

  /** The Swagger 2.0 document of `GET /openapi/v2` (JSON). */
  v2(): string {
    this.#v2 ??= JSON.stringify(v2Document(this.#docSpecs().values(), this.#schemas));
    return this.#v2;
  }

  #docSpecs(): Map<string, DocSpec> {
    this.#specs ??= documentSpecs(this.#defs);
    return this.#specs;
  }
}

/**
 * The OpenAPI documents of a catalogue whose definitions change at runtime (custom
 * resources): a new {@link OpenAPIService} is built, lazily, on the first request after the
 * catalogue changed. `schemas` gives the schema set that covers the current definitions.
 */
export class CatalogueOpenAPI {
  readonly #catalogue: Pick<Catalogue, "revision" | "definitions">;
  readonly #schemas: () => SchemaSet;
  #service?: OpenAPIService;
  #revision = -1;

  constructor(catalogue: Pick<Catalogue, "revision" | "definitions">, schemas: () => SchemaSet) {
    this.#catalogue = catalogue;
    this.#schemas = schemas;
  }

  /** The service for the catalogue as it is now. */
  current(): OpenAPIService {
    if (!this.#service || this.#revision !== this.#catalogue.revision) {
      this.#revision = this.#catalogue.revision;
      this.#service = new OpenAPIService([...this.#catalogue.definitions], this.#schemas());
    }
    return this.#service;
  }

  index(): OpenAPIIndex {
    return this.current().index();
  }

  document(path: string): OpenAPIDocument | undefined {
    return this.current().document(path);
  }

  v2(): string {
    return this.current().v2();
  }
}
