/**
 * The last handler of the chain: non-resource paths (version, discovery, OpenAPI, health)
 * and then resource requests.
 */

import { negotiateOutput } from "../codec/mod.ts";
import type { RequestContext } from "./context.ts";
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  type DiscoverySource,
} from "./discovery.ts";
import { type HealthCheck, healthResponse } from "./health.ts";
import { pathNotFound } from "./handlers/resource.ts";
import { objectResponse, responseBody } from "./respond.ts";
import { versionInfo } from "./version.ts";
import { methodNotAllowed } from "../api/mod.ts";
import { openAPIv2Handler } from "./openapi/mod.ts";
import { TEXT_FORMAT_CONTENT_TYPE } from "../metrics/mod.ts";
import { SNAPSHOT_PATH } from "./snapshot_endpoint.ts";

export interface OpenAPIProvider {
  index(): unknown;
  document(path: string): { body: string; hash: string } | undefined;
  v2(): string;
}

export interface RouterDeps {
  /** What discovery lists (see served_catalogue.ts). */
  catalogue: DiscoverySource;
  openapi: OpenAPIProvider;
  health: Record<"livez" | "readyz" | "healthz", HealthCheck[]>;
  serverAddress: () => string;
  resources: (ctx: RequestContext) => Promise<Response>;
  /** `/metrics`: the registry's text exposition (with `--workers`, every thread's, a promise
   * while the others answer). Absent: not served. */
  metrics?: () => string | Promise<string>;
  /** `GET /storage/snapshot` (snapshot_endpoint.ts). */
  snapshot?: (ctx: RequestContext) => Promise<Response>;
}

export function router(deps: RouterDeps) {
  const openapiV2 = openAPIv2Handler(() => deps.openapi.v2());
  // Resource requests, nearly all of them, go on without a promise of the router's own.
  return (ctx: RequestContext): Promise<Response> => {
    if (ctx.info.isResourceRequest) return deps.resources(ctx);
    if (deps.snapshot && ctx.info.path === SNAPSHOT_PATH) return deps.snapshot(ctx);
    try {
      return Promise.resolve(nonResource(ctx));
    } catch (err) {
      return Promise.reject(err);
    }
  };

  function nonResource(ctx: RequestContext): Response {
    const url = ctx.url;
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const health = healthResponse(path, url, deps.health, ctx.streamLargeBodies);
    if (health) return health;
    if (ctx.req.method !== "GET" && ctx.req.method !== "HEAD") throw methodNotAllowed();
    const accept = ctx.req.headers.get("Accept");
    if (path === "/version") return json(ctx, versionInfo());
    if (path === "/metrics" && deps.metrics) {
      const text = deps.metrics();
      return new Response(typeof text === "string" ? text : streamOf(text), {
        headers: { "Content-Type": TEXT_FORMAT_CONTENT_TYPE },
      });
    }
    if (path === "/api" || path === "/apis") {
      const which = path === "/api" ? "api" : "apis";
      const n = negotiateOutput(accept, { allowAs: ["APIGroupDiscoveryList"] });
      if (n.as) {
        const body = aggregatedDiscovery(deps.catalogue, which, `${n.as.group}/${n.as.version}`);
        return objectResponse(ctx, 200, body, n);
      }
      const body = which === "api"
        ? apiVersions(deps.serverAddress())
        : apiGroupList(deps.catalogue);
      return objectResponse(ctx, 200, body, n);
    }
    const parts = path.split("/").slice(1);
    if (parts[0] === "api" && parts.length === 2) {
      const body = apiResourceList(deps.catalogue, "", parts[1]);
      if (body) return json(ctx, body);
    }
    if (parts[0] === "apis" && parts.length === 2) {
      const body = apiGroup(deps.catalogue, parts[1]);
      if (body) return json(ctx, body);
    }
    if (parts[0] === "apis" && parts.length === 3) {
      const body = apiResourceList(deps.catalogue, parts[1], parts[2]);
      if (body) return json(ctx, body);
    }
    if (path === "/openapi/v3") return json(ctx, deps.openapi.index());
    if (path.startsWith("/openapi/v3/")) {
      const doc = deps.openapi.document(path.slice("/openapi/v3/".length));
      if (doc) {
        const immutable = url.searchParams.get("hash") === doc.hash;
        return new Response(responseBody(doc.body, ctx.streamLargeBodies), {
          headers: {
            "Content-Type": "application/json",
            "Etag": `"${doc.hash}"`,
            "Cache-Control": immutable ? "public, immutable" : "no-cache, private",
          },
        });
      }
    }
    if (path === "/openapi/v2") return openapiV2(ctx);
    throw pathNotFound();
  }
}

function json(ctx: RequestContext, body: unknown): Response {
  return objectResponse(ctx, 200, body, negotiateOutput(ctx.req.headers.get("Accept")));
}

/** A body that is `text` once it resolves. */
function streamOf(text: Promise<string>): ReadableStream<Uint8Array> {
  return ReadableStream.from((async function* () {
    yield new TextEncoder().encode(await text);
  })());
}
