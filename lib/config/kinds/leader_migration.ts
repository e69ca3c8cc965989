/**
 * LeaderMigrationConfiguration (`controllermanager.config.platform.io/v1alpha1`, kube's
 * `controllermanager.config.k8s.io/v1alpha1`, `v1beta1` and `v1`): which controller manager
 * leads each controller while controllers move between two of them. Defaults and validation
 * as kube's `leadermigration/config`; the generic controller manager configuration embeds the
 * same fields (`generic.leaderMigration`).
 *
 * @module
 */

import { z } from "zod";
import { child, type ConfigKind, type FieldErrors, kindCheck, type Obj } from "./common.ts";

export const LEADER_MIGRATION_KIND = "LeaderMigrationConfiguration";
export const LEADER_MIGRATION_API_VERSIONS = [
  "controllermanager.config.platform.io/v1alpha1",
  "controllermanager.config.k8s.io/v1alpha1",
  "controllermanager.config.k8s.io/v1beta1",
  "controllermanager.config.k8s.io/v1",
] as const;

/** The fields, without apiVersion and kind (also embedded in `generic.leaderMigration`). */
export const leaderMigrationFields = {
  leaderName: z.string().optional(),
  resourceLock: z.string().optional(),
  controllerLeaders: z.array(z.strictObject({
    name: z.string().optional(),
    component: z.string().optional(),
  })).optional(),
};
export const leaderMigrationSchema = z.strictObject(leaderMigrationFields);
type LeaderMigration = z.infer<typeof leaderMigrationSchema>;

/** kube's default: the `leases` lock. */
export function defaultLeaderMigration(m: LeaderMigration | undefined): Obj {
  return {
    leaderName: m?.leaderName ?? "",
    resourceLock: m?.resourceLock || "leases",
    controllerLeaders: (m?.controllerLeaders ?? []).map((c) => ({
      name: c.name ?? "",
      component: c.component ?? "",
    })),
  };
}

/** kube's ValidateLeaderMigrationConfiguration, with its paths under `path`. */
export function validateLeaderMigration(m: Obj, path: string, errs: FieldErrors): void {
  if (m.leaderName === "") {
    errs.required(
      child(path, "leaderName"),
      "leaderName must be set for LeaderMigrationConfiguration",
    );
  }
  if (m.resourceLock !== "leases" && m.resourceLock !== "endpoints") {
    errs.invalid(
      child(path, "resourceLock"),
      m.resourceLock,
      "resource Lock must be one of 'leases' or 'endpoints'",
    );
  }
  (m.controllerLeaders as Obj[]).forEach((c, i) => {
    const at = child(child(path, "controllerLeaders"), i);
    if (c.component === "") errs.required(child(at, "component"), "component must be set");
    if (c.name === "") errs.required(child(at, "name"), "name must be set");
  });
}

export const leaderMigrationKind: ConfigKind = {
  kind: LEADER_MIGRATION_KIND,
  apiVersions: LEADER_MIGRATION_API_VERSIONS,
  check: kindCheck(
    z.strictObject({ apiVersion: z.string(), kind: z.string(), ...leaderMigrationFields }),
    (m) => ({ apiVersion: m.apiVersion, kind: m.kind, ...defaultLeaderMigration(m) }),
    (m, errs) => validateLeaderMigration(m, "", errs),
  ),
};
