/**
 * The in-process certificate controllers, kube-controller-manager's `csrapproving` and
 * `csrsigning`, so that a request becomes a certificate with nothing else running.
 *
 * - approver: approves `platform.io/apiserver-client-nodeagent` requests that follow the node
 *   rules when the requester may create `certificatesigningrequests/nodeclient` (or, for a
 *   node renewing its own certificate, `…/selfnodeclient`); never other signers.
 * - signer: for an Approved request of a well-known signer without a certificate or a Failed
 *   condition, issues the certificate through `/status`, or adds a Failed condition saying
 *   why it cannot. Requests for other signers are left to external signers.
 *
 * Both watch the requests and work through a queue of names, one at a time; a write that lost
 * a race is retried from a fresh read.
 */

import type { Authorizer } from "../auth/mod.ts";
import type { KubeObject, ResourceRegistry, StrategyContext } from "../registry/mod.ts";
import {
  isWellKnownSigner,
  type Logger,
  rfc3339,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
  StatusError,
  WELL_KNOWN_SIGNERS,
} from "../api/mod.ts";
import {
  checkSignerRules,
  loadSigningCA,
  SIGNER_VALIDATION_FAILURE,
  type SignerConfig,
  type SigningCA,
  SigningError,
  type SignOutcome,
  signRequest,
} from "./signer.ts";
import { parseCsrRequest } from "./validation.ts";

/** Who the controllers write as, and their field manager. */
export const CONTROLLER_USER = "system:platform-controller-manager";
const MANAGER = "platform-controller-manager";
/** How long a request whose signing failed for a server-side reason waits to be retried. */
const RETRY_MS = 5_000;

export interface CsrControllerOptions {
  csrs: ResourceRegistry;
  /** `csrsigning` on: how to sign. */
  signer?: SignerConfig;
  /** `csrapproving` on: asks whether requesters may have node client certificates. */
  approver?: { authorizer: Authorizer };
  logger: Logger;
}

const CONTROLLER_CONTEXT: StrategyContext = {
  user: { username: CONTROLLER_USER, groups: ["system:masters", "system:authenticated"] },
};

function condition(csr: KubeObject, type: string): KubeObject | undefined {
  const list = Array.isArray(csr.status?.conditions) ? csr.status.conditions : [];
  return list.find((c: KubeObject) => c?.type === type);
}

function encodeBase64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export class CsrController {
  #opts: CsrControllerOptions;
  #abort = new AbortController();
  #queue = new Set<string>();
  #busy = false;
  #running?: Promise<void>;
  #draining?: Promise<void>;
  #timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(opts: CsrControllerOptions) {
    this.#opts = opts;
  }

  /** Lists the requests (queueing each), then follows changes. */
  async start(): Promise<void> {
    const { csrs } = this.#opts;
    const list = await csrs.list("");
    for (const csr of list.items) this.#queue.add(csr.metadata.name);
    const watch = csrs.watch("", {
      afterRevision: Number(list.resourceVersion),
      signal: this.#abort.signal,
    });
    this.#running = (async () => {
      try {
        for (;;) {
          const r = await watch.next();
          if (r.done) break;
          if (r.value.type !== "DELETED") this.#enqueue(r.value.object.metadata.name);
        }
      } catch (err) {
        if (!this.#abort.signal.aborted) this.#opts.logger.error("csr controller watch ended", err);
      }
    })();
    this.#kick();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    for (const t of this.#timers) clearTimeout(t);
    await this.#running;
    await this.#draining;
  }

  #enqueue(name: string): void {
    this.#queue.add(name);
    this.#kick();
  }

  #kick(): void {
    if (this.#busy || this.#abort.signal.aborted) return;
    this.#busy = true;
    this.#draining = (async () => {
      try {
        while (this.#queue.size && !this.#abort.signal.aborted) {
          const [name] = this.#queue;
          this.#queue.delete(name);
          await this.#sync(name);
        }
      } finally {
        this.#busy = false;
      }
    })();
  }

  #retryLater(name: string): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      this.#enqueue(name);
    }, RETRY_MS);
    this.#timers.add(t);
  }

  async #sync(name: string): Promise<void> {
    try {
      const csr = await this.#opts.csrs.get("", name).catch((err) => {
        if (err instanceof StatusError && err.code === 404) return undefined;
        throw err;
      });
      if (!csr) return;
      if (this.#opts.approver && !condition(csr, "Approved") && !condition(csr, "Denied")) {
        await this.#approve(csr);
        return; // the approval's own event brings the request back for signing
      }
      if (this.#opts.signer) await this.#sign(csr);
    } catch (err) {
      if (this.#abort.signal.aborted) return;
      if (err instanceof StatusError && err.code === 409) {
        this.#enqueue(name); // lost a race: read again
        return;
      }
      this.#opts.logger.error(`certificate controller: ${name}`, err);
      this.#retryLater(name);
    }
  }

  /** kube's csrapproving: node client certificates for requesters allowed to have them. */
  async #approve(csr: KubeObject): Promise<void> {
    const spec = csr.spec ?? {};
    if (spec.signerName !== SIGNER_APISERVER_CLIENT_NODEAGENT) return;
    let request;
    try {
      request = parseCsrRequest(spec.request ?? "");
    } catch {
      return;
    }
    if (!checkSignerRules(spec.signerName, request, spec.usages ?? []).ok) return;
    const commonName = request.subjectName.getField("CN")[0];
    const self = commonName === spec.username;
    const user = {
      username: spec.username ?? "",
      uid: spec.uid,
      groups: spec.groups ?? [],
      extra: spec.extra,
    };
    const allowed = async (subresource: string) =>
      (await this.#opts.approver!.authorizer.authorize({
        user,
        verb: "create",
        resourceRequest: true,
        apiGroup: "certificates.platform.io",
        resource: "certificatesigningrequests",
        subresource,
      })).decision === "Allow";
    let message: string;
    if (self && await allowed("selfnodeclient")) {
      message = "Auto approving self node agent client certificate after SubjectAccessReview.";
    } else if (await allowed("nodeclient")) {
      message = "Auto approving node agent client certificate after SubjectAccessReview.";
    } else {
      return;
    }
    const next = structuredClone(csr);
    next.status ??= {};
    next.status.conditions = [
      ...(next.status.conditions ?? []),
      { type: "Approved", status: "True", reason: "AutoApproved", message },
    ];
    await this.#opts.csrs.update("", csr.metadata.name, next, CONTROLLER_CONTEXT, {
      subresource: "approval",
      manager: MANAGER,
    });
  }

  /** What the signer makes of a request of a well-known signer. */
  async #decide(spec: KubeObject): Promise<SignOutcome> {
    let request;
    try {
      request = parseCsrRequest(spec.request ?? "");
    } catch (err) {
      // Checked at creation: a request that still does not parse is the request's fault.
      return {
        status: "failed",
        reason: SIGNER_VALIDATION_FAILURE,
        message: (err as Error).message,
      };
    }
    return await signRequest(this.#opts.signer!, {
      signerName: spec.signerName,
      request,
      usages: spec.usages ?? [],
      expirationSeconds: spec.expirationSeconds,
    });
  }

  /** kube's csrsigning: issue, or say why not. */
  async #sign(csr: KubeObject): Promise<void> {
    const approved = condition(csr, "Approved")?.status === "True";
    if (!approved || condition(csr, "Failed") || csr.status?.certificate) return;
    const spec = csr.spec ?? {};
    // Other signer names are left to external signers.
    if (!isWellKnownSigner(spec.signerName)) return;
    let outcome: SignOutcome;
    try {
      outcome = await this.#decide(spec);
    } catch (err) {
      if (err instanceof SigningError && err.kind === "signer") {
        // The CA cannot sign now (expired, unusable): not the request's fault.
        this.#opts.logger.error(`certificate controller: cannot sign ${csr.metadata.name}`, err);
        this.#retryLater(csr.metadata.name);
        return;
      }
      throw err;
    }
    if (outcome.status === "ignored") return;
    const next = structuredClone(csr);
    next.status ??= {};
    if (outcome.status === "issued") {
      next.status.certificate = encodeBase64(outcome.certificate);
    } else {
      const now = rfc3339(new Date());
      next.status.conditions = [...(next.status.conditions ?? []), {
        type: "Failed",
        status: "True",
        reason: outcome.reason,
        message: outcome.message,
        lastUpdateTime: now,
      }];
    }
    await this.#opts.csrs.update("", csr.metadata.name, next, CONTROLLER_CONTEXT, {
      subresource: "status",
      manager: MANAGER,
    });
  }
}

/** Where the signer's CAs come from (`--cluster-signing-*`). */
export interface SigningFiles {
  /** The cluster CA (`<data-dir>/pki`): the default for every signer. */
  clusterCA: { certPem: string; keyPem: string };
  /** `--cluster-signing-cert-file` / `--cluster-signing-key-file`: one CA for all signers. */
  all?: { certFile: string; keyFile: string };
  /** Per signer name (`--cluster-signing-<signer>-cert-file` …); others use the cluster CA. */
  perSigner?: Record<string, { certFile: string; keyFile: string }>;
  /** `--cluster-signing-duration`, ms. */
  durationMs?: number;
}

/** Loads the signing CAs; a file that does not load is an Error naming it. */
export async function loadSignerConfig(files: SigningFiles): Promise<SignerConfig> {
  const load = async (ref: { certFile: string; keyFile: string }) => {
    try {
      return await loadSigningCA(
        await Deno.readTextFile(ref.certFile),
        await Deno.readTextFile(ref.keyFile),
      );
    } catch (err) {
      throw new Error(
        `cluster signing CA ${ref.certFile} / ${ref.keyFile}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  };
  const fallback = files.all
    ? await load(files.all)
    : await loadSigningCA(files.clusterCA.certPem, files.clusterCA.keyPem);
  const cas: Record<string, SigningCA> = {};
  for (const name of WELL_KNOWN_SIGNERS) {
    const own = files.perSigner?.[name];
    cas[name] = own ? await load(own) : fallback;
  }
  return { cas, duration: files.durationMs };
}
