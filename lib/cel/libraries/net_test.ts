import * as assert from "node:assert/strict";
import { compile } from "../mod.ts";

const run = (expression: string) =>
  compile("crdRule", expression, { expect: "bool" }).evaluate({ self: null, oldSelf: null });

Deno.test("net: Kubernetes' IP and CIDR examples hold", () => {
  const cases = [
    "ip('127.0.0.1').family() == 4",
    "ip('::1').family() == 6",
    "isIP('127.0.0.256') == false",
    "isIP(':::1') == false",
    "ip.isCanonical('2001:db8::abcd')",
    "!ip.isCanonical('2001:DB8::ABCD')",
    "!ip.isCanonical('2001:db8::0:0:0:abcd')",
    "ip('0.0.0.0').isUnspecified()",
    "ip('::').isUnspecified()",
    "ip('127.0.0.1').isLoopback()",
    "ip('::1').isLoopback()",
    "ip('224.0.0.1').isLinkLocalMulticast()",
    "ip('ff02::1').isLinkLocalMulticast()",
    "ip('169.254.169.254').isLinkLocalUnicast()",
    "ip('fe80::1').isLinkLocalUnicast()",
    "ip('192.168.0.1').isGlobalUnicast()",
    "!ip('255.255.255.255').isGlobalUnicast()",
    "string(ip('2001:0db8:0:0:0:0:0:1')) == '2001:db8::1'",
    "isIP('::ffff:1.2.3.4') == false",
    "isIP('fe80::1%eth0') == false",
    "isIP('01.2.3.4') == false",
    "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))",
    "!cidr('192.168.0.0/24').containsIP('192.168.1.1')",
    "cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))",
    "!cidr('192.168.1.0/24').containsCIDR('192.168.2.0/24')",
    "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
    "cidr('::1/128').ip().family() == 6",
    "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
    "cidr('192.168.0.1/24') != cidr('192.168.0.1/24').masked()",
    "cidr('::1/128').prefixLength() == 128",
    "!isCIDR('192.168.0.0/33')",
    "!isCIDR('::1/129')",
    "isCIDR('10.0.0.0/8')",
    "string(cidr('2001:db8::/32')) == '2001:db8::/32'",
    "ip('1:2:3:4:5:6:1.2.3.4').family() == 6",
    "string(ip('1:0:0:2:0:0:0:3')) == '1:0:0:2::3'",
  ];
  for (const c of cases) assert.equal(run(c), true, c);
});

Deno.test("net: bad addresses fail with Kubernetes' messages", () => {
  assert.throws(
    () => run("ip('1.2.3') == ip('1.2.3.4')"),
    /IP Address "1\.2\.3" parse error during conversion from string/,
  );
  assert.throws(() => run("ip('::ffff:1.2.3.4').family() == 6"), /IPv4-mapped IPv6 address/);
  assert.throws(() => run("ip('fe80::1%eth0').family() == 6"), /with zone value is not allowed/);
  assert.throws(
    () => run("cidr('10.0.0.0/33').prefixLength() == 33"),
    /network address parse error during conversion from string: netip\.ParsePrefix\("10\.0\.0\.0\/33"\): bad bits/,
  );
  // The static types keep IPs and CIDRs apart.
  assert.throws(
    () =>
      compile("crdRule", "cidr('10.0.0.0/8').containsIP(cidr('10.0.0.0/8'))", { expect: "bool" }),
    /found no matching overload for 'containsIP'/,
  );
});
