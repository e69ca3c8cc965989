/** The names of the signers this server issues certificates for (CSR `spec.signerName`). */

/** Client certificates for authenticating to the API server; never auto-approved. */
export const SIGNER_APISERVER_CLIENT = "platform.io/apiserver-client";
/** Client certificates of node agents; may be auto-approved. */
export const SIGNER_APISERVER_CLIENT_NODEAGENT = "platform.io/apiserver-client-nodeagent";
/** Serving certificates of node agents; never auto-approved. */
export const SIGNER_NODEAGENT_SERVING = "platform.io/nodeagent-serving";

/** The signers this server issues for; requests for other names are left to external signers. */
export const WELL_KNOWN_SIGNERS = [
  SIGNER_APISERVER_CLIENT,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
  SIGNER_NODEAGENT_SERVING,
] as const;

/** One of {@link WELL_KNOWN_SIGNERS}. */
export type WellKnownSigner = typeof WELL_KNOWN_SIGNERS[number];

/** Whether `signerName` is one of {@link WELL_KNOWN_SIGNERS}. */
export function isWellKnownSigner(signerName: string): signerName is WellKnownSigner {
  return (WELL_KNOWN_SIGNERS as readonly string[]).includes(signerName);
}
