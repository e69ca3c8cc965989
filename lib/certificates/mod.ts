/** The public surface of lib/certificates/ (lib/README.md). */
export { CsrController, loadSignerConfig } from "./controller.ts";
export { ensurePki, type Pki } from "./pki.ts";
export { ensureAdminToken, ensureContinueKey } from "./admin_credentials.ts";
export { writeKubeconfig } from "./kubeconfig.ts";
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
