import { assertEquals, assertMatch } from "../../tests/assert.ts";
import { createLogger, escapeControl } from "./log.ts";

Deno.test("escapeControl escapes control characters and line separators, nothing else", () => {
  assertEquals(escapeControl("a\nb\r\tc"), "a\\nb\\r\\tc");
  assertEquals(
    escapeControl("\u0000\u001b[31m\u007f\u0085\u2028"),
    "\\u0000\\u001b[31m\\u007f\\u0085\\u2028",
  );
  assertEquals(escapeControl('café "x" \\n 😀'), 'café "x" \\n 😀');
});

Deno.test("every log line is one line, whatever its message and extras carry", () => {
  const lines: string[] = [];
  const log = createLogger("info", (l) => lines.push(l));
  log.error(
    "GET /api/v1/namespaces/a\u0000b\n2026-01-01T00:00:00.000Z INFO  forged",
    new Error("x\u001b[2J"),
    {
      name: "n\r",
    },
  );
  assertEquals(lines.length, 1);
  assertEquals(lines[0].includes("\n"), false);
  assertMatch(
    lines[0],
    /a\\u0000b\\n2026-01-01T00:00:00\.000Z INFO {2}forged x\\u001b\[2J \{"name":"n\\r"\}$/,
  );
});
