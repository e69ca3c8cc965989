import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import { type FieldError, fieldErrorMessage } from "../api/errors.ts";
import {
  type CsrSpec,
  type CsrStatus,
  defaultConditionTimes,
  KNOWN_USAGES,
  parseCsrRequest,
  validateCertificate,
  validateConditions,
  validateCsrSpec,
  validateSignerName,
} from "./validation.ts";

x509.cryptoProvider.set(crypto);

const EC_P256 = { name: "ECDSA", namedCurve: "P-256" } as const;
const ECDSA_SHA256 = { name: "ECDSA", hash: "SHA-256" } as const;

function messages(errs: FieldError[]): string[] {
  return errs.map(fieldErrorMessage);
}

function b64(text: string): string {
  return btoa(text);
}

async function newCsr(
  name = "CN=system:node:n1,O=system:nodes",
  keys?: CryptoKeyPair,
  signingAlgorithm: Algorithm = ECDSA_SHA256,
): Promise<x509.Pkcs10CertificateRequest> {
  keys ??= await crypto.subtle.generateKey(EC_P256, true, ["sign", "verify"]);
  return await x509.Pkcs10CertificateRequestGenerator.create({ name, keys, signingAlgorithm });
}

function pem(type: string, der: ArrayBuffer | Uint8Array): string {
  return x509.PemConverter.encode(der as ArrayBuffer, type) + "\n";
}

const csrPem = pem("CERTIFICATE REQUEST", (await newCsr()).rawData);

function spec(over: Partial<CsrSpec> = {}): CsrSpec {
  return {
    request: b64(csrPem),
    signerName: "platform.io/apiserver-client",
    usages: ["digital signature", "client auth"],
    ...over,
  };
}

async function selfSigned(cn: string): Promise<string> {
  const keys = await crypto.subtle.generateKey(EC_P256, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: `CN=${cn}`,
    notBefore: new Date(),
    notAfter: new Date(Date.now() + 3600_000),
    keys,
    signingAlgorithm: ECDSA_SHA256,
  });
  return cert.toString("pem") + "\n";
}

const leafPem = await selfSigned("leaf");
const intermediatePem = await selfSigned("intermediate");

// ---- spec.request

Deno.test("a valid spec has no errors", async () => {
  deepStrictEqual(await validateCsrSpec(spec()), []);
  deepStrictEqual(await validateCsrSpec(spec({ expirationSeconds: 600 })), []);
  deepStrictEqual(await validateCsrSpec(spec({ expirationSeconds: null })), []);
});

Deno.test("spec.request is required", async () => {
  deepStrictEqual(messages(await validateCsrSpec(spec({ request: undefined }))), [
    "spec.request: Required value",
  ]);
  deepStrictEqual(messages(await validateCsrSpec(spec({ request: "" }))), [
    "spec.request: Required value",
  ]);
});

async function requestErrors(request: string): Promise<string[]> {
  const errs = await validateCsrSpec(spec({ request }));
  for (const e of errs) {
    strictEqual(e.type, "Invalid");
    strictEqual(e.field, "spec.request");
  }
  return errs.map((e) => e.detail!);
}

Deno.test("spec.request must be base64", async () => {
  deepStrictEqual(await requestErrors("not base64!"), ["illegal base64 data"]);
});

Deno.test("spec.request must hold a PEM block of type CERTIFICATE REQUEST", async () => {
  deepStrictEqual(await requestErrors(b64("just some text\n")), [
    "PEM block type must be CERTIFICATE REQUEST",
  ]);
  deepStrictEqual(await requestErrors(b64(leafPem)), [
    "PEM block type must be CERTIFICATE REQUEST",
  ]);
  // The legacy OpenSSL label is not accepted either.
  deepStrictEqual(
    await requestErrors(b64(csrPem.replaceAll("CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST"))),
    ["PEM block type must be CERTIFICATE REQUEST"],
  );
});

Deno.test("spec.request must hold exactly one PEM block", async () => {
  deepStrictEqual(await requestErrors(b64(csrPem + csrPem)), [
    "must contain exactly one PEM block, found 2",
  ]);
  deepStrictEqual(await requestErrors(b64(csrPem + leafPem)), [
    "must contain exactly one PEM block, found 2",
  ]);
});

Deno.test("spec.request tolerates text around the block", async () => {
  deepStrictEqual(await requestErrors(b64(`my request\n${csrPem}trailing words\n`)), []);
});

Deno.test("spec.request must be a parseable PKCS#10 request", async () => {
  deepStrictEqual(
    await requestErrors(b64(pem("CERTIFICATE REQUEST", new Uint8Array([0x30, 3, 2, 1, 1])))),
    ["x509: malformed certificate request"],
  );
  deepStrictEqual(
    await requestErrors(b64(
      "-----BEGIN CERTIFICATE REQUEST-----\n@@@\n" +
        "-----END CERTIFICATE REQUEST-----\n",
    )),
    ["malformed PEM block: the body is not valid base64"],
  );
});

Deno.test("spec.request whose signature does not verify is refused", async () => {
  const der = new Uint8Array((await newCsr("CN=tamper-me")).rawData);
  // Change one character of the subject: the signature no longer covers what is there.
  const at = new TextDecoder("latin1").decode(der).indexOf("tamper-me");
  ok(at > 0);
  der[at] = "T".charCodeAt(0);
  const tampered = pem("CERTIFICATE REQUEST", der);
  strictEqual(parseCsrRequest(b64(tampered)).subject, "CN=Tamper-me");
  deepStrictEqual(await requestErrors(b64(tampered)), [
    "x509: certificate request signature verification failed",
  ]);
});

Deno.test("RSA and Ed25519 requests verify", async () => {
  const rsa = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const ed = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  for (
    const csr of [
      await newCsr("CN=rsa", rsa, { name: "RSASSA-PKCS1-v1_5" }),
      await newCsr("CN=ed", ed as CryptoKeyPair, { name: "Ed25519" }),
    ]
  ) {
    deepStrictEqual(await requestErrors(b64(pem("CERTIFICATE REQUEST", csr.rawData))), []);
  }
});

Deno.test("parseCsrRequest returns the request or throws a clear error", () => {
  const csr = parseCsrRequest(b64(csrPem));
  strictEqual(csr.subject, "CN=system:node:n1, O=system:nodes");
  strictEqual(csr.publicKey.algorithm.name, "ECDSA");
  throws(() => parseCsrRequest(b64(leafPem)), /PEM block type must be CERTIFICATE REQUEST/);
  throws(() => parseCsrRequest("%%%"), /illegal base64 data/);
});

// ---- spec.signerName

Deno.test("spec.signerName is required", async () => {
  deepStrictEqual(messages(await validateCsrSpec(spec({ signerName: undefined }))), [
    "spec.signerName: Required value",
  ]);
});

Deno.test("the legacy-unknown signer is refused", async () => {
  deepStrictEqual(
    messages(await validateCsrSpec(spec({ signerName: "platform.io/legacy-unknown" }))),
    [
      'spec.signerName: Invalid value: "platform.io/legacy-unknown": the legacy signerName is ' +
      "not allowed via this API version",
    ],
  );
});

Deno.test("signerName must be a qualified domain/path", () => {
  const f = "spec.signerName";
  deepStrictEqual(validateSignerName(f, "example.com/my-signer"), []);
  deepStrictEqual(validateSignerName(f, "platform.io/nodeagent-serving"), []);
  deepStrictEqual(validateSignerName(f, "example.com/my-ns.my-issuer"), []);
  const formMsg = 'spec.signerName: Invalid value: "%s": must be a fully qualified domain and ' +
    "path of the form 'example.com/signer-name'";
  for (const bad of ["example.com", "example.com/a/b"]) {
    deepStrictEqual(messages(validateSignerName(f, bad)), [formMsg.replace("%s", bad)]);
  }
  deepStrictEqual(messages(validateSignerName(f, "example/signer")), [
    'spec.signerName: Invalid value: "example": should be a domain with at least two segments ' +
    "separated by dots",
  ]);
  const [upper] = validateSignerName(f, "Example.com/signer");
  strictEqual(upper.type, "Invalid");
  strictEqual(upper.value, "Example.com");
  match(upper.detail!, /^validating label "Example": a lowercase RFC 1123 label must consist/);
  const [emptyPath] = validateSignerName(f, "example.com/");
  strictEqual(emptyPath.value, "");
  match(emptyPath.detail!, /^validating label "": a lowercase RFC 1123 subdomain/);
  const [pathCase] = validateSignerName(f, "example.com/My_Signer");
  match(pathCase.detail!, /^validating label "My_Signer": /);
});

Deno.test("signerName lengths are limited", () => {
  const label = "a".repeat(63);
  const longDomain = [label, label, label, label].join("."); // 255 bytes
  const errs = validateSignerName("spec.signerName", `${longDomain}/x`);
  deepStrictEqual(messages(errs), ["spec.signerName: Too long: may not be more than 253 bytes"]);
  const domain = [label, label, label, "a".repeat(61)].join("."); // 253 bytes
  const path = `${label}.${"b".repeat(253)}.x`; // 63 + 1 + 253 + 2 = 319 bytes
  deepStrictEqual(messages(validateSignerName("spec.signerName", `${domain}/${path}`)), [
    "spec.signerName: Too long: may not be more than 571 bytes",
  ]);
  deepStrictEqual(
    validateSignerName("spec.signerName", `${domain}/${label}.${"b".repeat(253)}`),
    [],
  );
});

// ---- spec.usages and spec.expirationSeconds

Deno.test("spec.usages is required", async () => {
  for (const usages of [undefined, []]) {
    deepStrictEqual(messages(await validateCsrSpec(spec({ usages }))), [
      "spec.usages: Required value",
    ]);
  }
});

Deno.test("spec.usages holds only known values", async () => {
  const errs = await validateCsrSpec(spec({ usages: ["client auth", "server auth", "kerberos"] }));
  strictEqual(errs.length, 1);
  strictEqual(errs[0].type, "NotSupported");
  strictEqual(errs[0].field, "spec.usages[2]");
  strictEqual(errs[0].value, "kerberos");
  const listed = [...KNOWN_USAGES].sort().map((u) => JSON.stringify(u)).join(", ");
  strictEqual(errs[0].detail, `supported values: ${listed}`);
  match(fieldErrorMessage(errs[0]), /^spec\.usages\[2\]: Unsupported value: "kerberos": /);
  deepStrictEqual(await validateCsrSpec(spec({ usages: [...KNOWN_USAGES] })), []);
});

Deno.test("spec.usages has no duplicates", async () => {
  deepStrictEqual(
    messages(
      await validateCsrSpec(spec({ usages: ["client auth", "digital signature", "client auth"] })),
    ),
    ['spec.usages[2]: Duplicate value: "client auth"'],
  );
});

Deno.test("spec.expirationSeconds is at least 600", async () => {
  deepStrictEqual(messages(await validateCsrSpec(spec({ expirationSeconds: 599 }))), [
    "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 " +
    "seconds (10 minutes)",
  ]);
});

Deno.test("every spec violation is reported at once", async () => {
  const errs = await validateCsrSpec({
    request: b64(leafPem),
    signerName: "platform.io/legacy-unknown",
    usages: ["any", "bogus", "any"],
    expirationSeconds: 60,
  });
  deepStrictEqual(errs.map((e) => `${e.type} ${e.field}`), [
    "Invalid spec.request",
    "NotSupported spec.usages[1]",
    "Duplicate spec.usages[2]",
    "Invalid spec.signerName",
    "Invalid spec.expirationSeconds",
  ]);
  deepStrictEqual(messages(await validateCsrSpec(undefined)), [
    "spec.request: Required value",
    "spec.usages: Required value",
    "spec.signerName: Required value",
  ]);
});

// ---- status.conditions

Deno.test("conditions need a type and a status", () => {
  deepStrictEqual(
    messages(validateConditions({ conditions: [{ status: "True" }, { type: "Approved" }] }, {})),
    ["status.conditions[0].type: Required value", "status.conditions[1].status: Required value"],
  );
});

Deno.test("Approved, Denied and Failed may only be True; other types any status", () => {
  for (const type of ["Approved", "Denied", "Failed"]) {
    for (const status of ["False", "Unknown", "Yes"]) {
      deepStrictEqual(messages(validateConditions({ conditions: [{ type, status }] }, undefined)), [
        `status.conditions[0].status: Unsupported value: "${status}": supported values: "True"`,
      ]);
    }
    deepStrictEqual(validateConditions({ conditions: [{ type, status: "True" }] }, undefined), []);
  }
  deepStrictEqual(
    validateConditions({
      conditions: [{ type: "Issuing", status: "False" }, { type: "Queued", status: "Unknown" }],
    }, undefined),
    [],
  );
  deepStrictEqual(
    messages(validateConditions({ conditions: [{ type: "Issuing", status: "maybe" }] }, undefined)),
    [
      'status.conditions[0].status: Unsupported value: "maybe": supported values: "False", ' +
      '"True", "Unknown"',
    ],
  );
});

Deno.test("one condition per type", () => {
  deepStrictEqual(
    messages(validateConditions({
      conditions: [
        { type: "Failed", status: "True" },
        { type: "Issuing", status: "True" },
        { type: "Failed", status: "True" },
      ],
    }, undefined)),
    ['status.conditions[2].type: Duplicate value: "Failed"'],
  );
});

Deno.test("Approved and Denied are mutually exclusive", () => {
  deepStrictEqual(
    messages(validateConditions({
      conditions: [{ type: "Denied", status: "True" }, { type: "Approved", status: "True" }],
    }, undefined)),
    [
      'status.conditions[1].type: Invalid value: "Approved": Approved and Denied conditions are ' +
      "mutually exclusive",
    ],
  );
});

Deno.test("Approved, Denied and Failed cannot be removed", () => {
  const old: CsrStatus = {
    conditions: [
      { type: "Approved", status: "True" },
      { type: "Failed", status: "True" },
      { type: "Issuing", status: "True" },
    ],
  };
  deepStrictEqual(messages(validateConditions({ conditions: [] }, old)), [
    'status.conditions: Forbidden: updates may not remove a condition of type "Approved"',
    'status.conditions: Forbidden: updates may not remove a condition of type "Failed"',
  ]);
  // A custom condition may go; kept ones may change their message.
  deepStrictEqual(
    validateConditions({
      conditions: [
        { type: "Approved", status: "True", message: "again" },
        { type: "Failed", status: "True" },
      ],
    }, old),
    [],
  );
  deepStrictEqual(validateConditions(undefined, undefined), []);
});

// ---- condition timestamps

Deno.test("defaultConditionTimes: transition times defaulted, update times kept", () => {
  const now = "2030-01-01T00:00:00Z";
  const old: CsrStatus = {
    conditions: [
      {
        type: "Approved",
        status: "True",
        lastTransitionTime: "2020-01-01T00:00:00Z",
        lastUpdateTime: "2020-01-02T00:00:00Z",
      },
      { type: "Issuing", status: "False", lastTransitionTime: "2020-01-03T00:00:00Z" },
    ],
  };
  const status: CsrStatus = {
    conditions: [
      { type: "Approved", status: "True" }, // unchanged: transition time kept
      { type: "Issuing", status: "True" }, // status changed: now
      { type: "Failed", status: "True" }, // added: now
      {
        type: "Custom",
        status: "True",
        lastTransitionTime: "2021-01-01T00:00:00Z",
        lastUpdateTime: "2021-01-02T00:00:00Z",
      }, // client-set: kept
    ],
  };
  defaultConditionTimes(status, old, now);
  deepStrictEqual(status.conditions!.map((c) => [c.lastTransitionTime, c.lastUpdateTime]), [
    ["2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z"],
    [now, undefined],
    [now, undefined],
    ["2021-01-01T00:00:00Z", "2021-01-02T00:00:00Z"],
  ]);

  const created: CsrStatus = { conditions: [{ type: "Approved", status: "True" }] };
  defaultConditionTimes(created, undefined, now);
  deepStrictEqual(created.conditions![0], {
    type: "Approved",
    status: "True",
    lastTransitionTime: now,
  });
});

// ---- status.certificate

function certErrors(certificate: string, old?: CsrStatus, conditions?: CsrStatus["conditions"]) {
  return messages(validateCertificate({ certificate }, old, conditions));
}

const INVALID_CERT = 'status.certificate: Invalid value: "<certificate data>": ';

Deno.test("status.certificate accepts one or more CERTIFICATE blocks with text around", () => {
  deepStrictEqual(certErrors(""), []);
  deepStrictEqual(certErrors(b64(leafPem)), []);
  deepStrictEqual(certErrors(b64(`issued:\n${leafPem}chain:\n${intermediatePem}end\n`)), []);
});

Deno.test("status.certificate must be PEM CERTIFICATE blocks without headers", () => {
  deepStrictEqual(certErrors("@@@"), [`${INVALID_CERT}illegal base64 data`]);
  deepStrictEqual(certErrors(b64("no pem here")), [
    `${INVALID_CERT}must contain at least one CERTIFICATE PEM block`,
  ]);
  deepStrictEqual(certErrors(b64(leafPem + csrPem)), [
    `${INVALID_CERT}only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"`,
  ]);
  const withHeaders = leafPem.replace(
    "-----BEGIN CERTIFICATE-----\n",
    "-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n",
  );
  deepStrictEqual(certErrors(b64(withHeaders)), [
    `${INVALID_CERT}no PEM block headers are permitted`,
  ]);
  deepStrictEqual(certErrors(b64(pem("CERTIFICATE", new Uint8Array([0x30, 3, 2, 1, 1])))), [
    `${INVALID_CERT}x509: malformed certificate`,
  ]);
  deepStrictEqual(certErrors(b64(leafPem.replace("END CERTIFICATE", "END CERT"))), [
    `${INVALID_CERT}malformed CERTIFICATE PEM block`,
  ]);
  // A BEGIN line without an END line is only text.
  deepStrictEqual(certErrors(b64(`${leafPem}-----BEGIN CERTIFICATE-----\nabc\n`)), []);
});

Deno.test("PEM scanning stays fast on hostile input", async () => {
  const hostile = b64("-----BEGIN CERTIFICATE-----\n".repeat(40_000) + "-----END X-----\n");
  const start = performance.now();
  deepStrictEqual(certErrors(hostile), [`${INVALID_CERT}malformed CERTIFICATE PEM block`]);
  strictEqual((await requestErrors(hostile)).length, 1);
  const ms = performance.now() - start;
  ok(ms < 1000, `took ${ms} ms`);
});

Deno.test("status.certificate is immutable once set", () => {
  const old = { certificate: b64(leafPem) };
  deepStrictEqual(certErrors(b64(intermediatePem), old), [
    "status.certificate: Forbidden: updates may not modify existing certificate content",
  ]);
  deepStrictEqual(certErrors(b64(leafPem), old), []);
  // The same bytes in differently wrapped base64 are the same certificate.
  deepStrictEqual(certErrors(b64(leafPem).replace(/(.{76})/g, "$1\n"), old), []);
  // Not base64 is never the same as a stored certificate whose bytes read the same.
  deepStrictEqual(certErrors("abc", { certificate: btoa("abc") }), [
    "status.certificate: Forbidden: updates may not modify existing certificate content",
    `${INVALID_CERT}illegal base64 data`,
  ]);
  // Content stored earlier is not checked again.
  deepStrictEqual(certErrors(b64("legacy"), { certificate: b64("legacy") }), []);
  // Clearing it is a modification too.
  deepStrictEqual(messages(validateCertificate({}, old)), [
    "status.certificate: Forbidden: updates may not modify existing certificate content",
  ]);
});

Deno.test("status.certificate stays empty when Denied or Failed", () => {
  for (const type of ["Denied", "Failed"]) {
    const conditions = [{ type, status: "True" }];
    deepStrictEqual(certErrors(b64(leafPem), undefined, conditions), [
      `status.certificate: Forbidden: may not be set when the request has a ${type} condition`,
    ]);
    deepStrictEqual(
      messages(validateCertificate({ certificate: b64(leafPem), conditions }, undefined)),
      [`status.certificate: Forbidden: may not be set when the request has a ${type} condition`],
    );
    deepStrictEqual(validateCertificate({ conditions }, undefined), []);
  }
  deepStrictEqual(certErrors(b64(leafPem), undefined, [{ type: "Approved", status: "True" }]), []);
});
