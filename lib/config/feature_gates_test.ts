import assert from "node:assert/strict";
import { ConfigError } from "./config_error.ts";
import {
  FEATURE_GATES,
  featureGateHelpLines,
  parseFeatureGates,
  resolveFeatureGates,
} from "./feature_gates.ts";

Deno.test("the gate table has the documented stages and defaults", () => {
  const table = Object.fromEntries(
    Object.entries(FEATURE_GATES).map(([k, v]) => [k, `${v.stage}:${v.default}`]),
  );
  assert.deepEqual(table, {
    AllAlpha: "alpha:false",
    AllBeta: "beta:false",
    WatchList: "alpha:false",
    APIResponseCompression: "beta:true",
    StructuredAuthenticationConfiguration: "beta:true",
    StructuredAuthorizationConfiguration: "beta:true",
    AnonymousAuthConfigurableEndpoints: "beta:true",
  });
  assert.equal(featureGateHelpLines().length, Object.keys(FEATURE_GATES).length);
});

Deno.test("parseFeatureGates reads A=true,B=false", () => {
  assert.deepEqual(
    parseFeatureGates(" WatchList=true , APIResponseCompression=FALSE,,"),
    new Map([["WatchList", true], ["APIResponseCompression", false]]),
  );
  assert.deepEqual(parseFeatureGates(""), new Map());
  assert.deepEqual(
    parseFeatureGates("WatchList=true,WatchList=false"),
    new Map([["WatchList", false]]),
  );
});

Deno.test("parseFeatureGates rejects unknown gates and non-booleans", () => {
  assert.throws(() => parseFeatureGates("Nope=true"), (err: unknown) => {
    assert(err instanceof ConfigError);
    assert.match(err.message, /^unknown feature gate "Nope" \(known: /);
    return true;
  });
  assert.throws(
    () => parseFeatureGates("WatchList=yes"),
    new ConfigError('WatchList: "yes" is not a boolean (true or false)'),
  );
  assert.throws(
    () => parseFeatureGates("WatchList"),
    new ConfigError('missing bool value for "WatchList" (expected WatchList=true)'),
  );
});

Deno.test("resolveFeatureGates applies defaults, then AllAlpha/AllBeta, then explicit", () => {
  const defaults = resolveFeatureGates(new Map());
  assert.equal(defaults.get("WatchList"), false);
  assert.equal(defaults.get("AnonymousAuthConfigurableEndpoints"), true);
  assert.equal(defaults.size, Object.keys(FEATURE_GATES).length);

  const alpha = resolveFeatureGates(new Map([["AllAlpha", true]]));
  assert.equal(alpha.get("WatchList"), true);
  assert.equal(alpha.get("APIResponseCompression"), true);

  const alphaButNotWatch = resolveFeatureGates(
    new Map([["AllAlpha", true], ["WatchList", false]]),
  );
  assert.equal(alphaButNotWatch.get("WatchList"), false);

  // As in Kubernetes, AllBeta=false turns off every beta gate that is not named.
  const noBeta = resolveFeatureGates(
    new Map([["AllBeta", false], ["AnonymousAuthConfigurableEndpoints", true]]),
  );
  assert.equal(noBeta.get("APIResponseCompression"), false);
  assert.equal(noBeta.get("StructuredAuthenticationConfiguration"), false);
  assert.equal(noBeta.get("AnonymousAuthConfigurableEndpoints"), true);
  assert.equal(noBeta.get("WatchList"), false); // alpha: untouched
});
