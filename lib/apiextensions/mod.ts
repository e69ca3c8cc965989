/** The public surface of lib/apiextensions/ (lib/README.md). */
export { CLEANUP_FINALIZER, setCondition } from "./conditions.ts";
export { CrdController } from "./controller.ts";
export { recordReviewGroup } from "./conversion_webhook.ts";
export {
  defaultCustomResourceDefinition,
  validateCustomResourceDefinition,
  validateCustomResourceDefinitionUpdate,
} from "./validation.ts";
