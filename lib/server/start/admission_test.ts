import assert from "node:assert/strict";
import { ADMISSION_PLUGIN_NAMES, enabledAdmissionPlugins } from "../../config/mod.ts";
import { ADMISSION_PLUGINS } from "./admission.ts";

/** Named in lib/config before its entry lands here (another change adds it). */
const PENDING = ["ValidatingAdmissionPolicy"];

Deno.test("the flags' plugin names are ADMISSION_PLUGINS' names, in the same order", () => {
  const built = ADMISSION_PLUGINS.map((p) => p.name);
  assert.deepEqual(
    built,
    ADMISSION_PLUGIN_NAMES.filter((n) => !PENDING.includes(n) || built.includes(n)),
  );
  // kube's order: EventRateLimit after NamespaceLifecycle, the webhooks and the policy last.
  assert.deepEqual(ADMISSION_PLUGIN_NAMES.slice(-3), [
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
  ]);
  assert.deepEqual(ADMISSION_PLUGIN_NAMES.slice(0, 2), ["NamespaceLifecycle", "EventRateLimit"]);
  assert.equal(enabledAdmissionPlugins().includes("EventRateLimit"), false);
});
