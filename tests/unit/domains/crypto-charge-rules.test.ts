import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { depositAddresses } from "../../../server/domains/billing/crypto/addresses.ts";
import {
  type ChargeState,
  type CryptoChargeStatus,
  chargeStatusAfter,
  providerStatus,
  weiForCents,
} from "../../../server/domains/billing/crypto/rules.ts";
import { DEV_CRYPTO_MNEMONIC } from "../../../server/platform/config.ts";

const WEI_PER_ETH = 10n ** 18n;
const deadline = new Date("2026-11-29T12:00:00Z");
const before = new Date(deadline.getTime() - 1);
const state = (status: CryptoChargeStatus, amountWei = 1000n): ChargeState => ({
  status,
  amountWei,
  expiresAt: deadline,
});
const seen = (latestWei: bigint, confirmedWei: bigint | null, now = before) => ({
  latestWei,
  confirmedWei,
  confirmedBlock: confirmedWei === null ? null : 10,
  now,
});

describe("a crypto charge's amount", () => {
  it("is the invoice's cents at the rate, rounded up to the wei: never short, less than a wei over", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 1, max: 1e9 }), (cents, rate) => {
        const wei = weiForCents(cents, rate);
        const exact = BigInt(cents) * WEI_PER_ETH;
        expect(wei * BigInt(rate) >= exact).toBe(true);
        expect((wei - 1n) * BigInt(rate) < exact).toBe(true);
      }),
    );
  });

  it("is 0.01 ETH for $30 at $3,000 an ether", () => {
    expect(weiForCents(3000, 300_000)).toBe(WEI_PER_ETH / 100n);
  });
});

describe("a crypto charge's status", () => {
  it("waits, is underpaid, pending, then confirmed as the payment arrives and is confirmed", () => {
    expect(chargeStatusAfter(state("NEW"), seen(0n, 0n))).toBe("NEW");
    expect(chargeStatusAfter(state("NEW"), seen(999n, 0n))).toBe("UNDERPAID");
    expect(chargeStatusAfter(state("UNDERPAID"), seen(1000n, 999n))).toBe("PENDING");
    expect(chargeStatusAfter(state("PENDING"), seen(1000n, 1000n))).toBe("CONFIRMED");
  });

  it("stays underpaid, however often looked at, until enough arrives", () => {
    expect(chargeStatusAfter(state("UNDERPAID"), seen(999n, 999n))).toBe("UNDERPAID");
  });

  it("has no confirmed balance before the chain has the blocks: pending, not confirmed", () => {
    expect(chargeStatusAfter(state("NEW"), seen(5000n, null))).toBe("PENDING");
  });

  it("expires at its deadline without the amount, underpaid or not; pending there waits for its confirmations", () => {
    expect(chargeStatusAfter(state("NEW"), seen(0n, 0n, deadline))).toBe("EXPIRED");
    expect(chargeStatusAfter(state("UNDERPAID"), seen(999n, 999n, deadline))).toBe("EXPIRED");
    expect(chargeStatusAfter(state("PENDING"), seen(1000n, 0n, deadline))).toBe("PENDING");
    expect(chargeStatusAfter(state("PENDING"), seen(1000n, 1000n, deadline))).toBe("CONFIRMED");
  });

  it("never leaves CONFIRMED or EXPIRED", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<CryptoChargeStatus>("CONFIRMED", "EXPIRED"),
        fc.bigInt({ min: 0n, max: 10n ** 21n }),
        fc.boolean(),
        (status, wei, late) => {
          const now = late ? deadline : before;
          expect(chargeStatusAfter(state(status), seen(wei, wei, now))).toBe(status);
        },
      ),
    );
  });

  it("is named in Coinbase's and Stripe's words", () => {
    expect(providerStatus("COINBASE", "CONFIRMED")).toBe("COMPLETED");
    expect(providerStatus("COINBASE", "UNDERPAID")).toBe("UNRESOLVED");
    expect(providerStatus("STRIPE", "CONFIRMED")).toBe("succeeded");
    expect(providerStatus("STRIPE", "EXPIRED")).toBe("canceled");
  });
});

describe("deposit addresses", () => {
  it("are one per index, the same on every derivation, and not anvil's funded accounts", () => {
    const addressOf = depositAddresses(DEV_CRYPTO_MNEMONIC);
    const again = depositAddresses(DEV_CRYPTO_MNEMONIC);
    const addresses = [1, 2, 3, 4].map(addressOf);
    expect(new Set(addresses).size).toBe(4);
    expect(addresses.map((_, i) => again(i + 1))).toEqual(addresses);
    const anvilMnemonic = "test test test test test test test test test test test junk";
    const fromAnvilMnemonic = depositAddresses(anvilMnemonic)(0);
    // anvil's first funded account (m/44'/60'/0'/0/0 of its mnemonic) is not account 1's first address.
    expect(fromAnvilMnemonic.toLowerCase()).not.toBe("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
  });
});
