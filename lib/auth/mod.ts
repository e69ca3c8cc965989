/** The public surface of lib/auth/ (lib/README.md). */
export { anonymousUser } from "./anonymous.ts";
export { AuthenticationConfigReloader } from "./authentication_config_reloader.ts";
export { type Authenticator, tokenAuthenticator, unionAuthenticator } from "./authenticator.ts";
export { type AuthorizationConfig, loadAuthorizationConfig } from "./authorization_config.ts";
export { loadAuthenticationConfig } from "./authentication_config.ts";
export {
  alwaysAllow,
  type Attributes,
  type AuthorizationResult,
  type Authorizer,
  type NonResourceRule,
  type ResourceRule,
  type RuleSet,
} from "./authorizer.ts";
export {
  buildAuthorizer,
  type ChainAuthorizer,
  privilegedGroupsAuthorizer,
  unionAuthorizer,
} from "./authorizer_chain.ts";
export {
  parseServiceAccountUsername,
  serviceAccountGroups,
  serviceAccountUsername,
} from "./service_account_names.ts";
export {
  DEFAULT_EXPIRATION_SECONDS,
  MIN_EXPIRATION_SECONDS,
  SERVICE_ACCOUNT_ISSUER,
  ServiceAccountTokens,
} from "./service_account_tokens.ts";
export { instrumentedAuthorizer } from "./instrumented_authorizer.ts";
export { loadTokenFile, type TokenUser } from "./token_file.ts";
export {
  basicAuthenticator,
  type BasicUser,
  loadBasicAuthFile,
  parseBasicAuthFile,
} from "./basic_auth.ts";
export { type TokenReviewer, tokenReviewer } from "./token_review.ts";
export {
  ClientCAVerifier,
  clientCertificateAuthenticator,
  type Verification,
  type VerifiedClient,
} from "./x509.ts";
export { connectionFromKubeconfig, type WebhookConnection } from "./webhook_connection.ts";
