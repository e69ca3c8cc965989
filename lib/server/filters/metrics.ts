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
import type { ServerMetrics } from "../../metrics/mod.ts";
import type { RequestContext } from "../context.ts";
import { requestLabelsOf, type ServedResource } from "../request_labels.ts";
import { bodySize } from "../respond.ts";

/** Records one request (timed from `ctx.arrived`): its answer, or (`res` undefined) the error
 * the chain's exit turns into one. */
export type RequestRecorder = (
  ctx: RequestContext,
  res: Response | undefined,
  err?: unknown,
) => void;

export function requestMetricsRecorder(
  metrics: ServerMetrics,
  served: ServedResource,
): RequestRecorder {
  return (ctx, res, err) => {
    const seconds = (performance.now() - (ctx.arrived ?? 0)) / 1000;
    // What the chain's error exit answers: the Status's code, else 500.
    const code = res ? res.status : err instanceof StatusError ? err.code : 500;
    const labels = requestLabelsOf(ctx.req, ctx.url, ctx.info, served, code);
    metrics.requests.record(labels, code, seconds, res ? bodySize(res) : undefined);
  };
}
