/**
 * The shape of an `AuthenticationConfiguration` file: its fields, their types, and no others.
 * Parsing reports every shape problem and still yields the file's data, typed, with each
 * wrongly typed value taken as absent, so that the checks of meaning
 * (authentication_config_checks.ts) run on the rest and a file's errors are all reported at
 * once.
 *
 * null is taken as absent, as kube's decoder does: an absent string is `undefined`, an absent
 * list `[]`, an absent mapping one with every field absent.
 *
 * @module
 */

import { z } from "zod";
import type { SchemaIssue } from "../config/mod.ts";

/** The `apiVersion` of the file; the others are kube's spellings of the same type. */
export const AUTHENTICATION_CONFIG_API_VERSION = "apiserver.platform.io/v1beta1";
export const AUTHENTICATION_CONFIG_API_VERSIONS = [
  AUTHENTICATION_CONFIG_API_VERSION,
  "apiserver.config.k8s.io/v1",
  "apiserver.config.k8s.io/v1beta1",
  "apiserver.config.k8s.io/v1alpha1",
] as const;
export const AUTHENTICATION_CONFIG_KIND = "AuthenticationConfiguration";
/** kube's limit on the number of JWT authenticators. */
export const MAX_JWT_AUTHENTICATORS = 64;

const text = z.string().nullish().transform((v) => v ?? undefined);
const flag = z.boolean().nullish().transform((v) => v ?? undefined);

function list<T extends z.ZodType>(item: T) {
  return z.array(item).nullish().transform((v) => v ?? []);
}

function mapping<S extends z.ZodRawShape>(shape: S) {
  const schema = z.strictObject(shape);
  return schema.nullish().transform((v) => v ?? schema.parse({}));
}

// Fields are listed in the order the checks read them, which is the order of their errors.

const prefixedClaimOrExpression = mapping({ claim: text, prefix: text, expression: text });

const issuerSchema = mapping({
  url: text,
  discoveryURL: text,
  audiences: list(text),
  audienceMatchPolicy: text,
  certificateAuthority: text,
});

const jwtAuthenticatorSchema = mapping({
  issuer: issuerSchema,
  claimValidationRules: list(
    mapping({ claim: text, requiredValue: text, expression: text, message: text }),
  ),
  claimMappings: mapping({
    username: prefixedClaimOrExpression,
    groups: prefixedClaimOrExpression,
    uid: mapping({ claim: text, expression: text }),
    extra: list(mapping({ key: text, valueExpression: text })),
  }),
  userValidationRules: list(mapping({ expression: text, message: text })),
});

const anonymousSchema = z.strictObject({
  enabled: flag,
  conditions: list(mapping({ path: text })),
}).nullish().transform((v) => v ?? undefined);

const fileSchema = z.strictObject({
  apiVersion: text,
  kind: text,
  jwt: list(jwtAuthenticatorSchema),
  anonymous: anonymousSchema,
});

/** The file's data as its shape allows: every field typed, absent ones empty. */
export type AuthenticationConfigFile = z.output<typeof fileSchema>;
export type JwtAuthenticatorFile = z.output<typeof jwtAuthenticatorSchema>;
export type IssuerFile = z.output<typeof issuerSchema>;
export type PrefixedClaimOrExpressionFile = z.output<typeof prefixedClaimOrExpression>;

/**
 * The file's data and its shape problems, each object's unknown fields before the problems of
 * its fields (zod finds them the other way round).
 */
export function parseAuthenticationConfigShape(
  data: Record<string, unknown>,
): { file: AuthenticationConfigFile; issues: SchemaIssue[] } {
  const first = fileSchema.safeParse(data);
  if (first.success) return { file: first.data, issues: [] };
  const issues = unknownFieldsFirst(first.error.issues);
  return { file: fileSchema.parse(withoutProblems(data, issues)), issues };
}

/** A copy of `data` without the values and fields `issues` name (wrong types become null). */
function withoutProblems(data: Record<string, unknown>, issues: SchemaIssue[]): unknown {
  const copy = structuredClone(data);
  for (const issue of issues) {
    const parent = issue.path.slice(0, -1).reduce<unknown>(
      (cur, seg) => (cur as Record<PropertyKey, unknown>)[seg],
      copy,
    ) as Record<PropertyKey, unknown>;
    if (issue.code === "unrecognized_keys") {
      const holder = issue.path.length === 0 ? parent : parent[issue.path.at(-1)!];
      for (const key of issue.keys) delete (holder as Record<string, unknown>)[key];
    } else if (issue.path.length > 0) {
      parent[issue.path.at(-1)!] = null;
    }
  }
  return copy;
}

function unknownFieldsFirst(issues: readonly SchemaIssue[]): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  for (const issue of issues) {
    // zod reports an object's unknown keys after its fields', which come last in the list.
    const at = issue.code === "unrecognized_keys"
      ? out.findIndex((o) => isWithin(o.path, issue.path))
      : -1;
    if (at < 0) out.push(issue);
    else out.splice(at, 0, issue);
  }
  return out;
}

/** Whether `path` is `prefix` or under it. */
export function isWithin(path: readonly PropertyKey[], prefix: readonly PropertyKey[]): boolean {
  return prefix.length <= path.length && prefix.every((seg, i) => path[i] === seg);
}
