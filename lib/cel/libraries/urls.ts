/**
 * Kubernetes' URL library: `url(s)` (an absolute URI or an absolute path, else an error),
 * `isURL(s)`, and the URL members `getScheme`, `getHost`, `getHostname`, `getPort`,
 * `getEscapedPath` and `getQuery` (a map from each key to its values; "" or {} when absent).
 */

import { celMap, type CelValue } from "@bufbuild/cel";
import type { Library, Overload } from "../library.ts";
import { type OpaqueKind, unwrapOpaque, wrapOpaque } from "../opaque.ts";
import { BOOL, listOf, mapOf, opaque, STRING, type Type } from "../types.ts";
import {
  escapedPath,
  type GoUrl,
  parseQuery,
  parseRequestUri,
  parseUrl,
  splitHostPort,
} from "./go_url.ts";

interface Url {
  readonly text: string;
  readonly parsed: GoUrl;
}

const URL_KIND: OpaqueKind<Url> = { name: "kubernetes.URL", key: (u) => u.text };
const URL_TYPE = opaque(URL_KIND.name);

/** Kubernetes checks with ParseRequestURI, then keeps what Parse makes of it (fragments). */
function toUrl(text: string): Url {
  try {
    parseRequestUri(text);
    return { text, parsed: parseUrl(text) };
  } catch (err) {
    throw new Error(`URL parse error during conversion from string: ${(err as Error).message}`);
  }
}

function problem(text: string): string | undefined {
  try {
    toUrl(text);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const getter = (name: string, result: Type, get: (u: GoUrl) => CelValue): Overload => ({
  name,
  target: URL_TYPE,
  args: [],
  result,
  impl: (self) => get(unwrapOpaque(URL_KIND, self!).parsed),
  cost: () => 1,
});

export const urls: Library = {
  overloads: [
    {
      name: "url",
      args: [STRING],
      result: URL_TYPE,
      impl: (_, [s]) => wrapOpaque(URL_KIND, toUrl(s as string)),
    },
    {
      name: "isURL",
      args: [STRING],
      result: BOOL,
      impl: (_, [s]) => problem(s as string) === undefined,
    },
    getter("getScheme", STRING, (u) => u.scheme),
    getter("getHost", STRING, (u) => u.host),
    getter("getHostname", STRING, (u) => splitHostPort(u.host)[0]),
    getter("getPort", STRING, (u) => splitHostPort(u.host)[1]),
    getter("getEscapedPath", STRING, escapedPath),
    getter("getQuery", mapOf(STRING, listOf(STRING)), (u) => celMap(parseQuery(u.rawQuery))),
  ],
  literalChecks: [{ function: "url", arg: 0, problem }],
};
