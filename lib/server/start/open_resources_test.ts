import { rejects } from "node:assert/strict";
import { assertEquals } from "../../../tests/assert.ts";
import { OpenResources } from "./open_resources.ts";

Deno.test("resources close in reverse order of opening, each once", async () => {
  const resources = new OpenResources();
  const closed: string[] = [];
  resources.add("a", () => {
    closed.push("a");
  });
  resources.add("b", async () => {
    await Promise.resolve();
    closed.push("b");
  });
  resources.add("c", () => {
    closed.push("c");
  });
  await resources.closeAll();
  await resources.closeAll();
  assertEquals(closed, ["c", "b", "a"]);
});

Deno.test("a stop that fails does not keep the others from running", async () => {
  const resources = new OpenResources();
  const closed: string[] = [];
  resources.add("a", () => {
    closed.push("a");
  });
  resources.add("b", () => {
    throw new Error("b failed");
  });
  resources.add("c", () => {
    throw new Error("c failed");
  });
  await rejects(resources.closeAll(), /c failed/, "the first error, once all have run");
  assertEquals(closed, ["a"]);

  resources.add("d", () => {
    throw new Error("d failed");
  });
  resources.add("e", () => {
    closed.push("e");
  });
  const reported: string[] = [];
  await resources.closeAll((what, err) => reported.push(`${what}: ${(err as Error).message}`));
  assertEquals(reported, ["d: d failed"]);
  assertEquals(closed, ["a", "e"]);
});
