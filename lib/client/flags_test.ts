/** The client's command-line parsing, `--request-timeout` and kubectl's error texts. */

import { assertEquals } from "../../tests/assert.ts";
import { CommandError, statusMessage } from "./errors.ts";
import { parseFlags } from "./flags.ts";
import { parseRequestTimeout } from "./options.ts";
import { ALL_PATCH_FLAGS } from "./patch_flags.ts";

function fails(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assertEquals(err instanceof CommandError, true, String(err));
    return (err as Error).message;
  }
  throw new Error("expected a CommandError");
}

Deno.test("flags: the spellings pflag accepts", () => {
  const f = parseFlags(
    [
      "cm",
      "-nteam",
      "-p={}",
      "--type",
      "merge",
      "--as-group=a,b",
      "--as-group",
      "c",
      "-f",
      "x.yaml,y.yaml",
      "-R",
      "--local=false",
      "--dry-run",
      "--",
      "-name-",
    ],
    ALL_PATCH_FLAGS,
  );
  assertEquals(f.positionals, ["cm", "-name-"]);
  assertEquals(Object.fromEntries(f.values), {
    namespace: "team",
    patch: "{}",
    type: "merge",
    "as-group": ["a,b", "c"],
    filename: ["x.yaml", "y.yaml"],
    recursive: true,
    local: false,
    "dry-run": "client",
  });
});

Deno.test("flags: unknown flags and missing values are one-line errors", () => {
  assertEquals(fails(() => parseFlags(["--nope"], ALL_PATCH_FLAGS)), "unknown flag: --nope");
  assertEquals(
    fails(() => parseFlags(["-Z"], ALL_PATCH_FLAGS)),
    "unknown shorthand flag: 'Z' in -Z",
  );
  assertEquals(
    fails(() => parseFlags(["--type"], ALL_PATCH_FLAGS)),
    "flag needs an argument: --type",
  );
  assertEquals(
    fails(() => parseFlags(["--local=maybe"], ALL_PATCH_FLAGS)),
    'invalid argument "maybe" for "--local" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
  );
});

Deno.test("--request-timeout: 0 or a duration with its unit; a bad value in kubectl's words", () => {
  assertEquals(parseRequestTimeout(undefined), 0);
  assertEquals(parseRequestTimeout("0"), 0);
  // Spec 03: non-zero values carry a unit (kubectl would read 5 as seconds).
  assertEquals(
    fails(() => parseRequestTimeout("5")),
    'Invalid timeout value "5": a non-zero timeout needs a time unit (e.g. 1s | 2m | 3h)',
  );
  assertEquals(parseRequestTimeout("1m30s"), 90_000);
  assertEquals(parseRequestTimeout("250ms"), 250);
  assertEquals(
    fails(() => parseRequestTimeout("5x")),
    "Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed " +
      "by a corresponding time unit (e.g. 1s | 2m | 3h)",
  );
});

Deno.test("Status errors print as kubectl prints them", () => {
  assertEquals(
    statusMessage({ reason: "NotFound", message: 'configmaps "x" not found' }),
    'Error from server (NotFound): configmaps "x" not found',
  );
  assertEquals(
    statusMessage({ reason: "Unauthorized", message: "Unauthorized" }),
    "error: You must be logged in to the server (Unauthorized)",
  );
  assertEquals(
    statusMessage({
      reason: "Invalid",
      message: "ignored",
      details: {
        kind: "ConfigMap",
        name: "x",
        causes: [{ field: "data[a]", message: "Invalid value" }, { message: "other" }],
      },
    }),
    'The ConfigMap "x" is invalid: \n* data[a]: Invalid value\n* other',
  );
  assertEquals(statusMessage({ message: "boom" }), "Error from server: boom");
});
