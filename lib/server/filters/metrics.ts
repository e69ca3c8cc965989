/**
 * Request metrics filter, first in the chain so that every answer is counted, refusals by
 * authentication, authorization and the in-flight limits included: `apiserver_request_total`,
 * `apiserver_request_duration_seconds` (until the response starts: for a watch, its start)
 * and `apiserver_response_sizes` (bodies made in one piece; not watches or streamed lists).
 */

import { StatusError } from "../../api/mod.ts";
import type { ServerMetrics } from "../../metrics/mod.ts";
import type { Filter, RequestContext } from "../context.ts";
import { requestLabelsOf, type ServedResource } from "../request_labels.ts";
import { bodySize } from "../respond.ts";

export function requestMetricsFilter(metrics: ServerMetrics, served: ServedResource): Filter {
  const record = (ctx: RequestContext, code: number, started: number, res?: Response) => {
    const labels = requestLabelsOf(ctx.req, ctx.url, ctx.info, served, code);
    const bytes = res ? bodySize(res) : undefined;
    metrics.requests.record(labels, code, (performance.now() - started) / 1000, bytes);
  };
  // No closure per request when the answer is made at once; one `then` otherwise.
  return (ctx, next) => {
    const started = performance.now();
    const failed = (err: unknown) => {
      // What the chain's error exit will answer.
      record(ctx, err instanceof StatusError ? err.code : 500, started);
      throw err;
    };
    let work: Promise<Response>;
    try {
      // Filters that answer at once throw at once.
      work = next(ctx);
    } catch (err) {
      return failed(err);
    }
    return work.then((res) => {
      record(ctx, res.status, started, res);
      return res;
    }, failed);
  };
}
