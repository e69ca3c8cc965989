import { assertEquals } from "../../tests/assert.ts";
import { MemoryStore } from "../storage/memory.ts";
import {
  parseNodePortRange,
  parseServiceClusterIPRange,
  ServiceAllocator,
  serviceNetwork,
} from "./service_ips.ts";

Deno.test("service_ips: the range flag", () => {
  assertEquals(parseServiceClusterIPRange("10.0.0.0/24").map((r) => r.cidr), ["10.0.0.0/24"]);
  assertEquals(
    parseServiceClusterIPRange("10.0.0.0/24, fd00:10::/108").map((r) => r.family),
    ["IPv4", "IPv6"],
  );
  const bad = (text: string) => {
    try {
      parseServiceClusterIPRange(text);
      return "";
    } catch (err) {
      return (err as Error).message;
    }
  };
  assertEquals(
    bad("10.0.0.0/8"),
    "10.0.0.0/8 is too large; for 32-bit addresses, the mask must be >= 12",
  );
  assertEquals(bad("10.0.0.0/31"), "10.0.0.0/31 is too small to hold a Service IP");
  assertEquals(
    bad("10.0.0.0/24,10.1.0.0/24"),
    "two CIDRs must be of different IP families (one IPv4, one IPv6)",
  );
  assertEquals(bad("nope"), '"nope" is not a CIDR (e.g. 10.0.0.0/24 or fd00::/108)');
  assertEquals(parseNodePortRange("30000-32767"), { min: 30000, max: 32767 });
  let message = "";
  try {
    serviceNetwork(undefined, "5-1");
  } catch (err) {
    message = (err as Error).message;
  }
  assertEquals(message, '--service-node-port-range: "5-1" is not a port range (e.g. 30000-32767)');
});

Deno.test("service_ips: a /30 hands out its one free address, then is full", async () => {
  const store = new MemoryStore();
  const alloc = new ServiceAllocator(store, serviceNetwork("10.1.0.0/30", "30000-30001"));
  const holder = { namespace: "ns", name: "s" };
  assertEquals(alloc.firstIP(), "10.1.0.1");
  // The first address only when asked for; the network and broadcast addresses never.
  assertEquals(await alloc.allocateNextIP("IPv4", holder), "10.1.0.2");
  assertEquals(await alloc.allocateNextIP("IPv4", holder), undefined);
  assertEquals(await alloc.allocateIP("10.1.0.1", holder), undefined);
  assertEquals(await alloc.allocateIP("10.1.0.1", holder), "allocated");
  assertEquals(await alloc.allocateIP("10.1.0.3", holder), "outOfRange");
  await alloc.releaseIP("10.1.0.2");
  assertEquals(await alloc.allocateNextIP("IPv4", holder, true), "10.1.0.2");
  assertEquals(await alloc.allocateNextIP("IPv4", holder), "10.1.0.2");
  const ports = [
    await alloc.allocateNextNodePort(holder),
    await alloc.allocateNextNodePort(holder),
  ];
  assertEquals(ports.sort(), [30000, 30001]);
  assertEquals(await alloc.allocateNextNodePort(holder), undefined);
  await store.close();
});
