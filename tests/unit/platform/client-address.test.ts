// What per-address limits (sign-in, sign-up) count a client under.
import { expect, it } from "vitest";
import { clientAddressKey } from "../../../server/platform/client-address.ts";

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
