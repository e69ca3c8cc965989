/** The public surface of lib/patch/ (lib/README.md). */
export { applyJsonPatch } from "./json_patch.ts";
export { applyMergePatch } from "./merge_patch.ts";
export { applyStrategicMergePatch } from "./strategic.ts";
