/**
 * The bench's thinnest API server on etcd (the peer baseline of `--backend etcd`'s creates): a
 * `Deno.serve` over HTTPS with the server's TLS setup that answers each POST with the same
 * create-if-absent transaction the etcd3 backend makes, through the same client
 * (`lib/storage/etcd/client.ts`), and 201 with the object it stored.
 *
 * It reads the body, names the object, stores its JSON under `/registry/configmaps/<ns>/<name>`
 * and answers: no authentication, admission, validation, defaults or watch. What any server
 * on this stack must spend per create, so that `platform`'s creates ÷ the relay's say what its
 * own work costs, and the relay's ÷ etcd's transactions say what this machine leaves for it.
 *
 *   deno run -A bench/etcd_relay.ts <data dir> <etcd client url>
 *
 * Prints `serving on https://127.0.0.1:<port>` on standard error once it listens.
 */

import { EtcdClient } from "../lib/storage/etcd/client.ts";
import { setListenerNoDelay } from "../lib/server/nodelay.ts";
import { serveTls } from "./tls_serve.ts";

const [dataDir, etcdUrl] = Deno.args;
const client = await EtcdClient.connect([etcdUrl]);
const enc = new TextEncoder();
let n = 0;

async function create(req: Request): Promise<Response> {
  const obj = await req.json();
  const name = `relay-${(n++).toString(36)}`;
  obj.metadata = { ...obj.metadata, name, namespace: "default" };
  const key = enc.encode(`/registry/configmaps/default/${name}`);
  const value = JSON.stringify(obj);
  const res = await client.txn({
    compare: [{ key, target: "CREATE", result: "EQUAL", create_revision: 0 }],
    success: [{ request_put: { key, value: enc.encode(value) } }],
    failure: [],
  });
  if (!res.succeeded) return new Response("exists\n", { status: 409 });
  obj.metadata.resourceVersion = String(res.header.revision);
  return new Response(JSON.stringify(obj), {
    status: 201,
    headers: { "content-type": "application/json" },
  });
}

const server = await serveTls(
  dataDir,
  (req) => req.method === "POST" ? create(req) : new Response("POST only\n", { status: 405 }),
);
setListenerNoDelay(server.port); // as the server does
await server.announce();
client.close();
Deno.exit(0);
