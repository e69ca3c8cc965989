/** The public surface of lib/certificates/ (lib/README.md). */
export { CsrController, loadSignerConfig } from "./controller.ts";
export {
  ensureAdminToken,
  ensureContinueKey,
  ensurePki,
  type Pki,
  writeKubeconfig,
} from "./pki.ts";
export {
  defaultConditionTimes,
  validateCertificate,
  validateConditions,
  validateCsrSpec,
} from "./validation.ts";
export {
  CERTIFICATE_APPROVAL,
  CERTIFICATE_SIGNING,
  certificateApproval,
  certificateSigning,
} from "./admission.ts";
