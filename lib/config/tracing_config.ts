/**
 * The `--tracing-config-file` file (`TracingConfiguration`, spec 03): where spans go and how
 * many traces are sampled, validated as kube-apiserver validates it, every problem at once.
 *
 * Accepted `apiVersion`s: `apiserver.platform.io/v1beta1` and `/v1`, and kube's
 * `apiserver.config.k8s.io/v1alpha1`, `/v1beta1` and `/v1`. Unknown fields are errors.
 *
 * - `endpoint`: the collector's gRPC address, `host:port`, `dns://[authority]/host:port`,
 *   `unix:///path` or `unix-abstract:name` (kube's schemes); default `localhost:4317`.
 * - `samplingRatePerMillion`: an integer from 0 to 1,000,000; default 0: traces this server
 *   starts are never sampled, but a caller's sampled trace is followed (parent-based).
 *
 * @module
 */

import { resolve } from "node:path";
import { z } from "zod";
import { DEFAULT_TRACING_ENDPOINT, endpointProblem, type TracingSettings } from "../tracing/mod.ts";
import { ConfigError, quote } from "./config_error.ts";
import { describeValue, formatIssue, similarField } from "./schema_issues.ts";
import { parseYamlConfig, readConfigFile } from "./yaml_file.ts";

export const TRACING_CONFIG_API_VERSIONS = [
  "apiserver.platform.io/v1beta1",
  "apiserver.platform.io/v1",
  "apiserver.config.k8s.io/v1alpha1",
  "apiserver.config.k8s.io/v1beta1",
  "apiserver.config.k8s.io/v1",
] as const;
export const TRACING_CONFIG_KIND = "TracingConfiguration";
const MAX_SAMPLING_RATE = 1_000_000;

const fileSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  endpoint: z.string().nullish(),
  samplingRatePerMillion: z.int().nullish(),
});

/**
 * Reads and validates a `TracingConfiguration` file.
 *
 * @throws {ConfigError} one line per problem, each naming the file and the field, e.g.
 * `tracing.yaml: samplingRatePerMillion: Invalid value: 2000000: sampling rate per million
 * must be less than or equal to one million`.
 */
export async function loadTracingConfig(
  path: string,
  opts: { cwd?: string } = {},
): Promise<TracingSettings> {
  const text = await readConfigFile(
    "--tracing-config-file",
    path,
    resolve(opts.cwd ?? Deno.cwd(), path),
  );
  return parseTracingConfig(text, path);
}

/** Validates the text of a `TracingConfiguration` file; `path` names it in errors. */
export function parseTracingConfig(text: string, path: string): TracingSettings {
  const data = parseYamlConfig(text, path);
  if (data === null || data === undefined) {
    throw new ConfigError(
      `${path}: the file is empty; expected apiVersion: ${TRACING_CONFIG_API_VERSIONS[0]} ` +
        `and kind: ${TRACING_CONFIG_KIND}`,
    );
  }
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`${path}: expected a mapping, got ${describeValue(data)}`);
  }
  const errors: string[] = [];
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      errors.push(...formatIssue(issue, data, {
        articles: true,
        suggest: (key) => similarField(key, Object.keys(fileSchema.shape)),
      }));
    }
  }
  const raw = data as Record<string, unknown>;
  const { apiVersion, kind, endpoint, samplingRatePerMillion: rate } = raw;
  if (
    typeof apiVersion === "string" &&
    !(TRACING_CONFIG_API_VERSIONS as readonly string[]).includes(apiVersion)
  ) {
    errors.push(
      `apiVersion: expected one of ${TRACING_CONFIG_API_VERSIONS.map(quote).join(", ")}, ` +
        `got ${quote(apiVersion)}`,
    );
  }
  if (typeof kind === "string" && kind !== TRACING_CONFIG_KIND) {
    errors.push(`kind: expected ${quote(TRACING_CONFIG_KIND)}, got ${quote(kind)}`);
  }
  if (typeof endpoint === "string") {
    const problem = endpointProblem(endpoint);
    if (problem) errors.push(`endpoint: Invalid value: ${quote(endpoint)}: ${problem}`);
  }
  if (typeof rate === "number" && Number.isInteger(rate)) {
    if (rate < 0) {
      errors.push(`samplingRatePerMillion: Invalid value: ${rate}: sampling rate must be positive`);
    } else if (rate > MAX_SAMPLING_RATE) {
      errors.push(
        `samplingRatePerMillion: Invalid value: ${rate}: sampling rate per million must be ` +
          "less than or equal to one million",
      );
    }
  }
  if (errors.length) throw new ConfigError(errors.map((e) => `${path}: ${e}`).join("\n"));
  return {
    endpoint: typeof endpoint === "string" ? endpoint : DEFAULT_TRACING_ENDPOINT,
    samplingRatePerMillion: typeof rate === "number" ? rate : 0,
  };
}
