import { isIPv4, isIPv6 } from "node:net";

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
