/**
 * Health endpoints: `/livez`, `/readyz`, `/healthz`, each with `?verbose` and per-check
 * paths (`/readyz/storage`). Readiness fails while the server is shutting down.
 */

import { responseBody } from "./respond.ts";

export interface HealthCheck {
  name: string;
  check: () => boolean;
}

export function healthResponse(
  path: string,
  url: URL,
  checks: Record<"livez" | "readyz" | "healthz", HealthCheck[]>,
  streamLargeBodies: boolean | undefined,
): Response | undefined {
  const [, endpoint, single] = path.split("/");
  if (endpoint !== "livez" && endpoint !== "readyz" && endpoint !== "healthz") return undefined;
  const all = checks[endpoint];
  const chosen = single ? all.filter((c) => c.name === single) : all;
  if (single && !chosen.length) return new Response("404 page not found\n", { status: 404 });
  const results = chosen.map((c) => ({ name: c.name, ok: safe(c.check) }));
  const ok = results.every((r) => r.ok);
  const verbose = url.searchParams.has("verbose");
  const headers = {
    "Content-Type": "text/plain; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache, private",
  };
  if (!verbose && ok) return new Response("ok", { status: 200, headers });
  const lines = results.map((r) =>
    r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`
  );
  lines.push(ok ? `${endpoint} check passed` : `${endpoint} check failed`);
  return new Response(responseBody(lines.join("\n") + "\n", streamLargeBodies), {
    status: ok ? 200 : 500,
    headers,
  });
}

function safe(fn: () => boolean): boolean {
  try {
    return fn();
  } catch {
    return false;
  }
}
