// What per-address limits (sign-in, sign-up) count a client under.
import { describe, expect, it } from "vitest";
import { clientAddressKey, forwardedClient, trustedProxies } from "../../../server/platform/client-address.ts";

it.each([
  ["203.0.113.7", "203.0.113.7"],
  ["::ffff:203.0.113.7", "203.0.113.7"],
  ["2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
  ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
  ["2001:DB8:0001:0002:0:0:0:ffff", "2001:db8:1:2::/64"],
  ["2001:db8::1", "2001:db8:0:0::/64"],
  ["fe80::1%eth0", "fe80:0:0:0::/64"],
  ["::1", "0:0:0:0::/64"],
  ["1:2:3:4:5:6:192.0.2.1", "1:2:3:4::/64"],
])("%s counts as %s", (address, key) => {
  expect(clientAddressKey(address)).toBe(key);
});

it("counts every address of one IPv6 /64 as one client", () => {
  const keys = new Set(["2001:db8:7:9::1", "2001:db8:7:9::2", "2001:db8:7:9:ffff::ffff"].map(clientAddressKey));
  expect(keys.size).toBe(1);
  expect(clientAddressKey("2001:db8:7:a::1")).not.toBe(clientAddressKey("2001:db8:7:9::1"));
});

describe("behind the operator's proxies (NODEPLANE_TRUST_PROXY)", () => {
  it("is off by default: no predicate, the socket's peer is the client", () => {
    expect(trustedProxies(false)).toBeNull();
  });

  it("trusts the listed addresses and ranges, IPv4-mapped ones as IPv4", () => {
    const trusts = trustedProxies("10.0.0.0/8, 192.0.2.1,2001:db8::/32") as (a: string) => boolean;
    expect(["10.1.2.3", "::ffff:10.1.2.3", "192.0.2.1", "2001:db8::5"].map(trusts)).toEqual([true, true, true, true]);
    expect(["11.0.0.1", "192.0.2.2", "2001:db9::1", "not an address"].map(trusts)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it("reads X-Forwarded-For from its right end while the address naming each hop is trusted", () => {
    const trusts = trustedProxies("10.0.0.0/8") as (a: string) => boolean;
    // The client put a hop of its own on the left: the proxy's appended address is the client.
    expect(forwardedClient("10.0.0.2", "198.51.100.9, 203.0.113.7", trusts)).toBe("203.0.113.7");
    // Two proxies of ours.
    expect(forwardedClient("10.0.0.2", "203.0.113.7, 10.0.0.3", trusts)).toBe("203.0.113.7");
    // A peer that is not ours names no one.
    expect(forwardedClient("198.51.100.1", "203.0.113.7", trusts)).toBe("198.51.100.1");
    // A hop that is not an address stops the walk at the last trusted one.
    expect(forwardedClient("10.0.0.2", "203.0.113.7, unknown", trusts)).toBe("10.0.0.2");
    expect(forwardedClient("10.0.0.2", undefined, trusts)).toBe("10.0.0.2");
    // true: every peer, so the leftmost address.
    expect(
      forwardedClient("10.0.0.2", "198.51.100.9, 203.0.113.7", trustedProxies(true) as (a: string) => boolean),
    ).toBe("198.51.100.9");
  });
});
