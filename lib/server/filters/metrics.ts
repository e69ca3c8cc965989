/**
 * The request metrics of every answer, refusals by authentication, authorization and the
 * in-flight limits included: `apiserver_request_total`, `apiserver_request_duration_seconds`
 * (until the response starts: for a watch, its start) and `apiserver_response_sizes` (bodies
 * made in one piece; not watches or streamed lists).
 *
 * Not a filter of its own: the chain's entry (chain.ts) records each request where it already
 * waits for the answer, as a filter's own `then` cost a promise and a closure per request.
 */

import { StatusError } from "../../api/mod.ts";
import type { RequestSeries, ServerMetrics } from "../../metrics/mod.ts";
import type { RequestContext } from "../context.ts";
import {
  dryRunLabel,
  requestLabelsOf,
  scopeLabel,
  type ServedResources,
  verbLabel,
} from "../request_labels.ts";
import { bodySize } from "../respond.ts";

/** Records one request (timed from `ctx.arrived`): its answer, or (`res` undefined) the error
 * the chain's exit turns into one. */
export type RequestRecorder = (
  ctx: RequestContext,
  res: Response | undefined,
  err?: unknown,
) => void;

/** A served resource's series (of requests without a subresource), with the labels that
 * picked it. */
interface Known {
  group: string;
  version: string;
  verb: string;
  dryRun: string;
  scope: string;
  series: RequestSeries;
}

export function requestMetricsRecorder(
  metrics: ServerMetrics,
  served: ServedResources,
): RequestRecorder {
  // The series of served resources' requests, by resource and then matched on the other
  // labels: a lookup by a short string and a few comparisons, where asking the catalogue
  // whether the resource is served and then finding the series by its eight labels cost
  // about 0.8 µs a GET (profiled). Only served resources are kept (their labels are bounded), and
  // all are forgotten when the catalogue changes: a resource no longer served is then
  // labelled as one.
  let known = new Map<string, Known[]>();
  let revision = served.revision;
  const seriesOf = (ctx: RequestContext, code: number): RequestSeries => {
    const info = ctx.info;
    // Non-resource paths, and subresources (whose label depends on whether their resource
    // serves them), are labelled afresh: only a resource's own requests are kept.
    if (!info.isResourceRequest || info.subresource !== "") {
      return metrics.requests.series(requestLabelsOf(ctx.req, ctx.url, info, served, code));
    }
    if (served.revision !== revision) {
      known = new Map();
      revision = served.revision;
    }
    const verb = verbLabel(ctx.req, info);
    const dryRun = dryRunLabel(ctx.url);
    const scope = scopeLabel(info);
    const candidates = known.get(info.resource);
    if (candidates) {
      for (const k of candidates) {
        if (
          k.verb === verb && k.scope === scope && k.group === info.group &&
          k.version === info.version && k.dryRun === dryRun
        ) return k.series;
      }
    }
    const labels = requestLabelsOf(ctx.req, ctx.url, info, served, code);
    const series = metrics.requests.series(labels);
    if (labels.resource !== "") {
      const entry = { group: info.group, version: info.version, verb, dryRun, scope, series };
      if (candidates) candidates.push(entry);
      else known.set(info.resource, [entry]);
    }
    return series;
  };
  return (ctx, res, err) => {
    const seconds = (performance.now() - (ctx.arrived ?? 0)) / 1000;
    // What the chain's error exit answers: the Status's code, else 500.
    const code = res ? res.status : err instanceof StatusError ? err.code : 500;
    metrics.requests.recordIn(seriesOf(ctx, code), code, seconds, res ? bodySize(res) : undefined);
  };
}
