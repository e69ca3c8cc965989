/**
 * Kubernetes' format library: named string formats that say what is wrong with a value.
 * `format.named(name)` is an optional Format (none for an unknown name); `format.dns1123Label()`
 * and the other names are the formats themselves; `<Format>.validate(s)` is none when `s` is
 * valid, else an optional list of the messages Kubernetes' validators give. Formats:
 * dns1123Label, dns1123Subdomain, dns1035Label, qualifiedName, their `…Prefix` forms (a
 * generateName, which may end in `-`), labelValue, uri, uuid, byte, date and datetime.
 */

import { celList, type CelValue } from "@bufbuild/cel";
import {
  isQualifiedName,
  isValidLabelValue,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
} from "../../api/mod.ts";
import type { Library, Overload } from "../library.ts";
import { type OpaqueKind, unwrapOpaque, wrapOpaque } from "../opaque.ts";
import { listOf, opaque, STRING } from "../types.ts";
import { parseRequestUri } from "./go_url.ts";
import { optionalOf, wrapOptional } from "./optional.ts";

interface Format {
  readonly name: string;
  validate(s: string): string[];
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

function validDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 &&
    d.getUTCDate() === Number(m[3]);
}

const check = (ok: (s: string) => boolean, message: string) => (s: string) =>
  ok(s) ? [] : [message];

const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label: (s) => nameIsDNSLabel(s),
  dns1123Subdomain: (s) => nameIsDNSSubdomain(s),
  dns1035Label: (s) => nameIsDNS1035Label(s),
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: (s) => nameIsDNSLabel(s, { prefix: true }),
  dns1123SubdomainPrefix: (s) => nameIsDNSSubdomain(s, { prefix: true }),
  dns1035LabelPrefix: (s) => nameIsDNS1035Label(s, { prefix: true }),
  labelValue: isValidLabelValue,
  uri: (s) => {
    try {
      parseRequestUri(s);
      return [];
    } catch (err) {
      return [(err as Error).message];
    }
  },
  uuid: check((s) => UUID.test(s), "does not match the UUID format"),
  byte: check((s) => BASE64.test(s), "invalid base64"),
  date: check(validDate, "invalid date"),
  datetime: check(
    (s) => DATE_TIME.test(s) && validDate(s.slice(0, 10)),
    "invalid datetime",
  ),
};

const FORMAT_KIND: OpaqueKind<Format> = { name: "kubernetes.NamedFormat", key: (f) => f.name };
const FORMAT = opaque(FORMAT_KIND.name);
const wrap = (name: string) => wrapOpaque(FORMAT_KIND, { name, validate: FORMATS[name] });

const named: Overload = {
  name: "format.named",
  args: [STRING],
  result: optionalOf(FORMAT),
  impl: (_, [name]) =>
    wrapOptional(Object.hasOwn(FORMATS, name as string) ? wrap(name as string) : undefined),
  cost: () => 1,
};

const validate: Overload = {
  name: "validate",
  target: FORMAT,
  args: [STRING],
  result: optionalOf(listOf(STRING)),
  impl: (self, [s]) => {
    const errors = unwrapOpaque(FORMAT_KIND, self!).validate(s as string);
    return wrapOptional(errors.length ? celList(errors) as CelValue : undefined);
  },
};

export const format: Library = {
  overloads: [
    named,
    validate,
    ...Object.keys(FORMATS).map((name): Overload => ({
      name: `format.${name}`,
      args: [],
      result: FORMAT,
      impl: () => wrap(name),
      cost: () => 1,
    })),
  ],
};
