/** Small helpers the figure modules of the bench share. */

import type { Api } from "./watch.ts";

/** The median of `xs` (the mean of the middle two for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** POSTs `body` to `path` as the admin; throws on anything but success. */
export async function admin(api: Api, path: string, body: unknown): Promise<void> {
  const res = await fetch(api.url + path, {
    method: "POST",
    client: api.client,
    headers: { ...api.headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`POST ${path} → ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}
