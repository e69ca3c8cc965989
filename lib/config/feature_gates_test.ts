import assert from "node:assert/strict";
import { ConfigError } from "./config_error.ts";
import {
  checkFeatureGates,
  FEATURE_GATES,
  featureGateHelpLines,
  featureGateWarnings,
  parseFeatureGates,
  resolveFeatureGates,
} from "./feature_gates.ts";

Deno.test("the gate table has kube 1.32's stages and defaults; GA gates are locked", () => {
  const table = Object.fromEntries(
    Object.entries(FEATURE_GATES).map((
      [k, v],
    ) => [k, `${v.stage}:${v.default}${v.lockToDefault ? ":locked" : ""}`]),
  );
  assert.deepEqual(table, {
    AllAlpha: "alpha:false",
    AllBeta: "beta:false",
    AdmissionWebhookMatchConditions: "ga:true:locked",
    AggregatedDiscoveryEndpoint: "ga:true:locked",
    AllowServiceLBStatusOnNonLB: "deprecated:false:locked",
    AllowUnsafeMalformedObjectDeletion: "alpha:false",
    AnonymousAuthConfigurableEndpoints: "beta:true",
    APIListChunking: "ga:true:locked",
    APIResponseCompression: "beta:true",
    APIServerTracing: "beta:true",
    RemainingItemCount: "ga:true:locked",
    RetryGenerateName: "ga:true:locked",
    ServiceAccountTokenJTI: "ga:true:locked",
    StructuredAuthenticationConfiguration: "beta:true",
    StructuredAuthorizationConfiguration: "ga:true:locked",
    WatchBookmark: "ga:true:locked",
    WatchList: "beta:true",
  });
  for (const [name, spec] of Object.entries(FEATURE_GATES)) {
    if (spec.stage === "ga") assert.equal(spec.lockToDefault, true, name);
  }
  // Two lines per gate: the kube-style head and what it gates.
  assert.equal(featureGateHelpLines().length, 2 * Object.keys(FEATURE_GATES).length);
});

Deno.test("parseFeatureGates reads A=true,B=false with Go's bool spellings", () => {
  assert.deepEqual(
    parseFeatureGates(" WatchList=true , APIResponseCompression=FALSE,,AllBeta=0"),
    new Map([["WatchList", true], ["APIResponseCompression", false], ["AllBeta", false]]),
  );
  assert.deepEqual(parseFeatureGates(""), new Map());
  assert.deepEqual(
    parseFeatureGates("WatchList=true,WatchList=false"),
    new Map([["WatchList", false]]),
  );
  // A locked gate may be set to its own value.
  assert.deepEqual(parseFeatureGates("APIListChunking=true"), new Map([["APIListChunking", true]]));
});

Deno.test("parseFeatureGates refuses with kube's messages", () => {
  const cases: [string, string][] = [
    ["Nope=true", "unrecognized feature gate: Nope"],
    [
      "WatchList=yes",
      'invalid value of WatchList=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
    ],
    ["WatchList", "missing bool value for WatchList"],
    [
      "APIListChunking=false",
      "cannot set feature gate APIListChunking to false, feature is locked to true",
    ],
    [
      "AllowServiceLBStatusOnNonLB=true",
      "cannot set feature gate AllowServiceLBStatusOnNonLB to true, feature is locked to false",
    ],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parseFeatureGates(text), new ConfigError(message), text);
  }
});

Deno.test("checkFeatureGates refuses a programmatic setting as the flag does", () => {
  assert.throws(
    () => checkFeatureGates(new Map([["StructuredAuthorizationConfiguration", false]])),
    new ConfigError(
      "--feature-gates: cannot set feature gate StructuredAuthorizationConfiguration to " +
        "false, feature is locked to true",
    ),
  );
  checkFeatureGates(new Map([["WatchList", false]]));
});

Deno.test("featureGateWarnings: kube's words for GA and deprecated gates only", () => {
  assert.deepEqual(
    featureGateWarnings(
      new Map([
        ["WatchList", false],
        ["APIListChunking", true],
        ["AllowServiceLBStatusOnNonLB", false],
        ["AllAlpha", true],
      ]),
    ),
    [
      "Setting GA feature gate APIListChunking=true. It will be removed in a future release.",
      "Setting deprecated feature gate AllowServiceLBStatusOnNonLB=false. It will be removed " +
      "in a future release.",
    ],
  );
});

Deno.test("resolveFeatureGates applies defaults, then AllAlpha/AllBeta, then explicit", () => {
  const defaults = resolveFeatureGates(new Map());
  assert.equal(defaults.get("WatchList"), true);
  assert.equal(defaults.get("AllowServiceLBStatusOnNonLB"), false);
  assert.equal(defaults.size, Object.keys(FEATURE_GATES).length);

  // As in Kubernetes, AllBeta=false turns off every beta gate that is not named, and leaves
  // GA and deprecated gates alone.
  const noBeta = resolveFeatureGates(
    new Map([["AllBeta", false], ["AnonymousAuthConfigurableEndpoints", true]]),
  );
  assert.equal(noBeta.get("APIResponseCompression"), false);
  assert.equal(noBeta.get("WatchList"), false);
  assert.equal(noBeta.get("AnonymousAuthConfigurableEndpoints"), true);
  assert.equal(noBeta.get("APIListChunking"), true);

  assert.equal(defaults.get("AllowUnsafeMalformedObjectDeletion"), false);

  // AllAlpha turns on the alpha gates not named, and touches no beta gate.
  const alpha = resolveFeatureGates(new Map([["AllAlpha", true], ["AllBeta", false]]));
  assert.equal(alpha.get("WatchList"), false);
  assert.equal(alpha.get("AllAlpha"), true);
  assert.equal(alpha.get("AllowUnsafeMalformedObjectDeletion"), true);
  const named = resolveFeatureGates(
    new Map([["AllAlpha", true], ["AllowUnsafeMalformedObjectDeletion", false]]),
  );
  assert.equal(named.get("AllowUnsafeMalformedObjectDeletion"), false);
});
