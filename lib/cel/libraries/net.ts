/**
 * Kubernetes' IP and CIDR libraries: `ip(s)`, `isIP(s)`, `ip.isCanonical(s)` and the IP members
 * `family`, `isUnspecified`, `isLoopback`, `isLinkLocalMulticast`, `isLinkLocalUnicast`,
 * `isGlobalUnicast`; `cidr(s)`, `isCIDR(s)` and the CIDR members `containsIP` and
 * `containsCIDR` (of a value or a string), `ip`, `masked`, `prefixLength`; `string(ip)` and
 * `string(cidr)` print them canonically. Parsing follows Go's netip (ip_value.ts).
 */

import type { CelValue } from "@bufbuild/cel";
import type { Library, Overload } from "../library.ts";
import { type OpaqueKind, unwrapOpaque, wrapOpaque } from "../opaque.ts";
import { BOOL, INT, opaque, STRING, type Type } from "../types.ts";
import { type IPAddr, parseCIDR, parseIP, type Prefix } from "./ip_value.ts";

const IP_KIND: OpaqueKind<IPAddr> = { name: "net.IP", key: (ip) => ip.toString() };
const CIDR_KIND: OpaqueKind<Prefix> = { name: "net.CIDR", key: (p) => p.toString() };
const IP = opaque(IP_KIND.name);
const CIDR = opaque(CIDR_KIND.name);

const ipOf = (v: CelValue | undefined) => unwrapOpaque(IP_KIND, v!);
const cidrOf = (v: CelValue | undefined) => unwrapOpaque(CIDR_KIND, v!);
const wrapIP = (ip: IPAddr) => wrapOpaque(IP_KIND, ip);
const wrapCIDR = (p: Prefix) => wrapOpaque(CIDR_KIND, p);

const fails = (parse: () => unknown) => {
  try {
    parse();
    return false;
  } catch {
    return true;
  }
};

const ipMember = (name: string, result: Type, impl: (ip: IPAddr) => CelValue): Overload => ({
  name,
  target: IP,
  args: [],
  result,
  impl: (self) => impl(ipOf(self)),
  cost: () => 1,
});

const cidrMember = (
  name: string,
  args: Type[],
  result: Type,
  impl: (p: Prefix, args: CelValue[]) => CelValue,
): Overload => ({
  name,
  target: CIDR,
  args,
  result,
  impl: (self, values) => impl(cidrOf(self), values),
});

export const net: Library = {
  overloads: [
    { name: "ip", args: [STRING], result: IP, impl: (_, [s]) => wrapIP(parseIP(s as string)) },
    {
      name: "isIP",
      args: [STRING],
      result: BOOL,
      impl: (_, [s]) => !fails(() => parseIP(s as string)),
    },
    {
      name: "ip.isCanonical",
      args: [STRING],
      result: BOOL,
      impl: (_, [s]) => parseIP(s as string).toString() === s,
    },
    { name: "string", args: [IP], result: STRING, impl: (_, [v]) => ipOf(v).toString() },
    ipMember("family", INT, (ip) => BigInt(ip.family)),
    ipMember("isUnspecified", BOOL, (ip) => ip.isUnspecified()),
    ipMember("isLoopback", BOOL, (ip) => ip.isLoopback()),
    ipMember("isLinkLocalMulticast", BOOL, (ip) => ip.isLinkLocalMulticast()),
    ipMember("isLinkLocalUnicast", BOOL, (ip) => ip.isLinkLocalUnicast()),
    ipMember("isGlobalUnicast", BOOL, (ip) => ip.isGlobalUnicast()),
    {
      name: "cidr",
      args: [STRING],
      result: CIDR,
      impl: (_, [s]) => wrapCIDR(parseCIDR(s as string)),
    },
    {
      name: "isCIDR",
      args: [STRING],
      result: BOOL,
      impl: (_, [s]) => !fails(() => parseCIDR(s as string)),
    },
    { name: "string", args: [CIDR], result: STRING, impl: (_, [v]) => cidrOf(v).toString() },
    cidrMember("containsIP", [IP], BOOL, (p, [ip]) => p.containsIP(ipOf(ip))),
    cidrMember("containsIP", [STRING], BOOL, (p, [s]) => p.containsIP(parseIP(s as string))),
    cidrMember("containsCIDR", [CIDR], BOOL, (p, [c]) => p.containsPrefix(cidrOf(c))),
    cidrMember(
      "containsCIDR",
      [STRING],
      BOOL,
      (p, [s]) => p.containsPrefix(parseCIDR(s as string)),
    ),
    cidrMember("ip", [], IP, (p) => wrapIP(p.addr)),
    cidrMember("masked", [], CIDR, (p) => wrapCIDR(p.masked())),
    cidrMember("prefixLength", [], INT, (p) => BigInt(p.bits)),
  ],
};
