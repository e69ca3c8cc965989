"""Drives the server with Debian's python3-kubernetes, as a user's script would.

Run by tests/python_client_test.ts with KUBECONFIG set to the server's admin kubeconfig and
the namespace to use as argv[1]. Prints one JSON object of what it saw; the Deno test asserts.
"""

import json
import sys
import threading

from kubernetes import client, config, watch
from kubernetes.dynamic import DynamicClient

namespace = sys.argv[1]
config.load_kube_config()
api = client.ApiClient()
core = client.CoreV1Api(api)
seen = {}

# A typed watch: the client sends watch=True and reads {"type", "object"} lines.
events = []
ready = threading.Event()


def watch_config_maps():
    w = watch.Watch()
    ready.set()
    # Only the ones made here: the namespace also holds kube-root-ca.crt.
    stream = w.stream(
        core.list_namespaced_config_map, namespace, label_selector="made-by=python", timeout_seconds=10
    )
    for event in stream:
        events.append((event["type"], event["object"].metadata.name))
        if len(events) == 2:
            w.stop()


watcher = threading.Thread(target=watch_config_maps)
watcher.start()
ready.wait()
for name in ("first", "second"):
    core.create_namespaced_config_map(
        namespace,
        client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name=name, labels={"made-by": "python"}), data={"k": name}
        ),
    )
watcher.join(timeout=20)
seen["watch"] = events

# The dynamic client finds kinds by their Kubernetes group names through discovery.
dyn = DynamicClient(api)
roles = dyn.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="Role")
role = roles.create(
    namespace=namespace,
    body={
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
    },
)
seen["role_api_version"] = role.apiVersion
seen["role_names"] = [r.metadata.name for r in roles.get(namespace=namespace).items]

crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
seen["crd_kind"] = crds.kind

# Server-side apply with force=True takes over a field another manager owns.
leases = dyn.resources.get(api_version="coordination.k8s.io/v1", kind="Lease")
lease = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "lock", "namespace": namespace},
    "spec": {"holderIdentity": "a"},
}
# This client version sends an apply body only when given as text.
leases.server_side_apply(
    body=json.dumps(lease), name="lock", namespace=namespace, field_manager="one"
)
lease["spec"]["holderIdentity"] = "b"
try:
    leases.server_side_apply(
        body=json.dumps(lease), name="lock", namespace=namespace, field_manager="two"
    )
    seen["conflict"] = None
except client.exceptions.ApiException as err:
    seen["conflict"] = err.status
applied = leases.server_side_apply(
    body=json.dumps(lease),
    name="lock",
    namespace=namespace,
    field_manager="two",
    force_conflicts=True,
)
seen["forced_holder"] = applied.spec.holderIdentity

print(json.dumps(seen))
