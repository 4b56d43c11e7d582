import { describe, expect, it } from "vitest";
import {
  ADDRESS_PACE_AFTER,
  AddressPacer,
  addressSlotMs,
  MAX_SLOT_WAIT_MS,
} from "../../../server/domains/account/sign-in-guard.ts";

describe("an address's pacing", () => {
  it("starts past 30 failures, a second apart, doubling every 30 more up to 8 s", () => {
    expect(addressSlotMs(0)).toBe(0);
    expect(addressSlotMs(ADDRESS_PACE_AFTER - 1)).toBe(0);
    expect(addressSlotMs(30)).toBe(1000);
    expect(addressSlotMs(59)).toBe(1000);
    expect(addressSlotMs(60)).toBe(2000);
    expect(addressSlotMs(90)).toBe(4000);
    expect(addressSlotMs(120)).toBe(8000);
    expect(addressSlotMs(10_000)).toBe(8000);
  });

  it("gives parallel attempts successive slots and refuses one whose slot is more than 10 s away", () => {
    let now = 1_000_000;
    const pacer = new AddressPacer(() => now);
    const waits = Array.from({ length: 13 }, () => pacer.reserve("10.0.0.1", 1000));
    expect(waits.slice(0, 11)).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10_000]);
    expect(waits[11]).toBe(-11_000);
    expect(waits[12]).toBe(-11_000);
    // Another address has slots of its own; time passing frees the first's.
    expect(pacer.reserve("10.0.0.2", 1000)).toBe(0);
    now += 11_000;
    expect(pacer.reserve("10.0.0.1", 1000)).toBe(0);
    expect(MAX_SLOT_WAIT_MS).toBe(10_000);
  });

  it("holds credential stuffing from one address to at most 550 attempts an hour however many it sends at once", () => {
    let now = 0;
    const pacer = new AddressPacer(() => now);
    let attempts = 0;
    // Every attempt fails and takes its slot at once; the attacker waits only as long as the slot says.
    while (now <= 3_600_000) {
      const interval = addressSlotMs(attempts);
      const wait = interval > 0 ? pacer.reserve("203.0.113.9", interval) : 0;
      expect(wait).toBeGreaterThanOrEqual(0);
      now += wait;
      if (now > 3_600_000) break;
      attempts += 1;
    }
    expect(attempts).toBeGreaterThan(500);
    expect(attempts).toBeLessThanOrEqual(550);
  });
});
