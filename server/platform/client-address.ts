import { BlockList, isIP, isIPv4, isIPv6 } from "node:net";
import type { TrustProxy } from "./config.ts";

/**
 * The client a per-address limit counts an attempt under, from the request's address (Fastify's
 * `request.ip`, which names a proxy's client only when NODEPLANE_TRUST_PROXY trusts that proxy).
 * An IPv4 address counts as it is (also when written IPv4-mapped, `::ffff:192.0.2.1`); an IPv6 address
 * counts by its /64, because one subscriber's network is usually given a whole /64 and could take a
 * fresh address for every attempt.
 */
export function clientAddressKey(address: string): string {
  const bare = address.split("%")[0].toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(bare);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (!isIPv6(bare)) return bare;
  const [head, tail] = bare.includes("::") ? bare.split("::") : [bare, null];
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  // A dotted IPv4 ending stands for the last two groups.
  const tailLength = tailGroups.reduce((length, group) => length + (group.includes(".") ? 2 : 1), 0);
  const gap = tail === null ? [] : Array<string>(8 - headGroups.length - tailLength).fill("0");
  const prefix = [...headGroups, ...gap, ...tailGroups].slice(0, 4);
  return `${prefix.map((group) => Number.parseInt(group, 16).toString(16)).join(":")}::/64`;
}

/** Adds an address or CIDR range to a block list; returns false when it is neither. */
export function addIpRule(list: BlockList, rule: string): boolean {
  const [address, prefix] = rule.trim().split("/");
  const family = isIP(address);
  if (family === 0) return false;
  const type = family === 4 ? "ipv4" : "ipv6";
  if (prefix === undefined) {
    list.addAddress(address, type);
    return true;
  }
  const bits = Number(prefix);
  if (!/^\d+$/.test(prefix) || bits > (family === 4 ? 32 : 128)) return false;
  list.addSubnet(address, bits, type);
  return true;
}

/** "::ffff:10.0.0.1" (IPv4 mapped into IPv6, as Node reports it on dual-stack sockets) is 10.0.0.1. */
export function normaliseIp(address: string): string {
  const trimmed = address.trim();
  return trimmed.startsWith("::ffff:") && isIP(trimmed.slice(7)) === 4 ? trimmed.slice(7) : trimmed;
}

/**
 * Which peers may name the client in X-Forwarded-For (NODEPLANE_TRUST_PROXY), as one predicate: Fastify
 * reads `request.ip` by it (the sign-in and sign-up limits), the RPC proxy its client address (endpoints'
 * IP allowlists, error logs). Null when off: the socket's peer is the client.
 */
export function trustedProxies(trust: TrustProxy): ((address: string) => boolean) | null {
  if (trust === false) return null;
  if (trust === true) return () => true;
  const list = new BlockList();
  for (const rule of trust.split(",")) addIpRule(list, rule);
  return (address) => {
    const bare = normaliseIp(address);
    const family = isIP(bare);
    return family !== 0 && list.check(bare, family === 4 ? "ipv4" : "ipv6");
  };
}

/**
 * The client behind trusted proxies, as Fastify's `request.ip` names it: X-Forwarded-For read from its
 * right end (the hop nearest) while the address that named each hop is trusted.
 */
export function forwardedClient(
  peer: string,
  forwardedFor: string | string[] | undefined,
  trusts: (address: string) => boolean,
): string {
  if (!forwardedFor) return peer;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",");
  let client = peer;
  for (let i = hops.length - 1; i >= 0 && trusts(client); i--) {
    const hop = normaliseIp(hops[i]);
    if (isIP(hop) === 0) break;
    client = hop;
  }
  return client;
}
