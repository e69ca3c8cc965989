/**
 * TokenReview's audience rules, as kube applies them. A review asks whether a token is valid
 * for `spec.audiences` (default: the API server's own audiences), and answers the audiences
 * it is valid for among them (`status.audiences`):
 * - a service account token is valid for the audiences of its `aud` claim;
 * - every other credential (static tokens, JWT issuers of the authentication configuration)
 *   carries no audience of its own and is valid for the API server's audiences only.
 * A token valid for none of the requested audiences is not authenticated, and the error says
 * so.
 */

import type { UserInfo } from "../api/mod.ts";
import type { Authenticator } from "./authenticator.ts";
import {
  type AccountLookup,
  goQuoted,
  type ServiceAccountTokens,
} from "./service_account_tokens.ts";

export interface TokenReviewResult {
  /** Set when the token is valid for one of the audiences. */
  user?: UserInfo;
  /** The requested audiences the token is valid for. */
  audiences: string[];
  error?: string;
}

export type TokenReviewer = (token: string, audiences?: string[]) => Promise<TokenReviewResult>;

/**
 * Reviews tokens with `authenticator` (the server's, for credentials without an audience) and
 * the service account tokens of `serviceAccounts`, whose default audiences are the API
 * server's.
 */
export function tokenReviewer(
  authenticator: Authenticator,
  serviceAccounts: { tokens: ServiceAccountTokens; lookup: AccountLookup },
): TokenReviewer {
  const apiAudiences = serviceAccounts.tokens.defaultAudiences;
  return async (token, requested) => {
    const wanted = requested?.length ? requested : apiAudiences;
    if (serviceAccounts.tokens.isOurs(token)) {
      return await serviceAccounts.tokens.review(token, serviceAccounts.lookup, wanted);
    }
    const req = new Request("https://localhost/", {
      headers: { Authorization: `Bearer ${token}` },
    });
    const user = await authenticator.authenticate(req);
    if (!user) return { audiences: [], error: "invalid bearer token" };
    const shared = apiAudiences.filter((a) => wanted.includes(a));
    if (!shared.length) {
      return {
        audiences: [],
        error: `token audiences ${goQuoted(apiAudiences)} is invalid for the target audiences ${
          goQuoted(wanted)
        }`,
      };
    }
    return { user, audiences: shared };
  };
}
