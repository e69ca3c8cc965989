/**
 * A CustomResourceDefinition of one version (`v1`, served and stored) whose objects take any
 * fields: for tests about requests to a custom resource rather than about its schema.
 */
export function openCrd(
  group: string,
  plural: string,
  kind: string,
  scope: "Namespaced" | "Cluster" = "Namespaced",
) {
  return {
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { plural, kind },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      }],
    },
  };
}
