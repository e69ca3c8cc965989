/**
 * Test and benchmark data for the YAML emitter: configmaps as the server returns them (the
 * bench's two-key data, server-set metadata, managedFields) and a list of them.
 */

/** One configmap as a GET returns it (the bench's `bench-encodings` objects). */
export function sampleConfigMap(i: number, namespace = "bench-encodings"): Record<string, unknown> {
  const name = `cm-${String(i).padStart(4, "0")}`;
  const hex = (i * 2654435761 >>> 0).toString(16).padStart(8, "0");
  const time = new Date(Date.UTC(2025, 0, 1, 12, 0, i % 60)).toISOString().replace(".000", "");
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace,
      uid: `${hex}-1f2e-4d3c-8b9a-${hex}0a1b`,
      resourceVersion: String(1000 + i),
      creationTimestamp: time,
      labels: { app: "bench", tier: i % 2 ? "backend" : "frontend", index: String(i) },
      managedFields: [{
        manager: "bench",
        operation: "Update",
        apiVersion: "v1",
        time,
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:data": { ".": {}, "f:app.properties": {}, "f:settings.json": {} },
          "f:metadata": {
            "f:labels": { ".": {}, "f:app": {}, "f:index": {}, "f:tier": {} },
          },
        },
      }],
    },
    data: {
      "app.properties": `name=${name}\nlog.level=info\nmax.connections=${100 + (i % 50)}\n` +
        "feature.flags=alpha,beta\n",
      "settings.json": `{"replicas":${1 + (i % 5)},"region":"eu-west-1","owner":"team-${
        i % 7
      }","timeoutSeconds":30,"retry":true}`,
    },
  };
}

/** A ConfigMapList of `count` configmaps. */
export function sampleConfigMapList(count = 1000): Record<string, unknown> {
  return {
    kind: "ConfigMapList",
    apiVersion: "v1",
    metadata: { resourceVersion: String(1000 + count) },
    items: Array.from({ length: count }, (_, i) => sampleConfigMap(i)),
  };
}
