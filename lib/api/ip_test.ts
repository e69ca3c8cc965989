import { assertEquals } from "../../tests/assert.ts";
import { canonicalIP, cidrContains, cidrSize, formatCIDR, parseCIDR, parseIP } from "./ip.ts";

Deno.test("ip: parse and canonical text", () => {
  assertEquals(canonicalIP("10.0.0.1"), "10.0.0.1");
  assertEquals(canonicalIP("0:0:0:0:0:0:0:1"), "::1");
  assertEquals(canonicalIP("FD00:0:0:0:0:0:0:a"), "fd00::a");
  assertEquals(canonicalIP("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
  assertEquals(canonicalIP("2001:db8:1:1:1:1:1:1"), "2001:db8:1:1:1:1:1:1");
  assertEquals(canonicalIP("::ffff:1.2.3.4"), "::ffff:102:304");
  assertEquals(canonicalIP("::"), "::");
  for (
    const bad of ["10.0.0.300", "10.0.0", "010.0.0.1", "1::2::3", "1:2:3:4:5:6:7:8:9", "", "x"]
  ) {
    assertEquals(parseIP(bad), undefined, bad);
  }
});

Deno.test("ip: CIDRs", () => {
  const c = parseCIDR("10.0.0.7/24")!;
  assertEquals(formatCIDR(c), "10.0.0.0/24");
  assertEquals(cidrSize(c), 256n);
  assertEquals(cidrContains(c, parseIP("10.0.0.255")!), true);
  assertEquals(cidrContains(c, parseIP("10.0.1.0")!), false);
  assertEquals(cidrContains(c, parseIP("::1")!), false);
  assertEquals(formatCIDR(parseCIDR("fd00:10::1/108")!), "fd00:10::/108");
  for (const bad of ["10.0.0.0/33", "10.0.0.0", "10.0.0.0/", "::/129", "10.0.0.0/024"]) {
    assertEquals(parseCIDR(bad), undefined, bad);
  }
});
