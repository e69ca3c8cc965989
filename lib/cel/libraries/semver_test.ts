import * as assert from "node:assert/strict";
import { compile } from "../mod.ts";

const run = (expression: string) =>
  compile("crdRule", expression, { expect: "bool" }).evaluate({ self: null, oldSelf: null });

Deno.test("semver: parsing, normalizing and Semantic Versioning precedence", () => {
  const cases = [
    "isSemver('1.2.3')",
    "isSemver('1.2.3-rc.1+build.5')",
    "!isSemver('v1.2.3')",
    "isSemver('v1.2.3', true)",
    "!isSemver('1.02.3')",
    "isSemver('1.02', true)",
    "isSemver('1.2', true)",
    "!isSemver('1.2-rc.1', true)",
    "!isSemver('1.2.3-01')",
    "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3",
    "semver('v01.2', true) == semver('1.2.0')",
    "semver('1.2.3').isLessThan(semver('1.10.0'))",
    "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))",
    "semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))",
    "semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11'))",
    "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
    "semver('2.0.0').isGreaterThan(semver('1.99.99'))",
    "semver('1.2.3+a').compareTo(semver('1.2.3+b')) == 0",
    "semver('1.2.3+a') == semver('1.2.3+b')",
    "semver('1.2.4').compareTo(semver('1.2.3')) == 1",
    // Quantities keep their own compareTo next to Semver's.
    "quantity('1Gi').compareTo(quantity('1G')) == 1",
  ];
  for (const c of cases) assert.equal(run(c), true, c);
});

Deno.test("semver: bad versions fail with blang/semver's messages", () => {
  assert.throws(() => run("semver('1.2').major() == 1"), /No Major\.Minor\.Patch elements found/);
  assert.throws(
    () => run("semver('1.02.3').major() == 1"),
    /Minor number must not contain leading zeroes "02"/,
  );
  assert.throws(
    () => run("semver('1.2-x', true).major() == 1"),
    /short version cannot contain PreRelease\/Build meta data/,
  );
});
