import { readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { builtinProvider } from "../../../server/domains/billing/payments/builtin.ts";
import {
  luhnValid,
  routingNumberValid,
  TEST_PAYMENT_NUMBERS,
  TEST_ROUTING_NUMBER,
} from "../../../server/domains/billing/payments/test-numbers.ts";

const customer = { accountId: "a", email: "a@example.com", name: null, customerRef: null };

describe("the built-in provider's test numbers", () => {
  it("are the ones docs/payments.md lists, each with what it does", () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, "../../../docs/payments.md"), "utf8");
    const rows = [...doc.matchAll(/^\| (card|bank) \| ([0-9 ]+) \| (.+) \|$/gm)].map((m) => ({
      kind: m[1],
      number: m[2].replace(/ /g, ""),
      description: m[3],
    }));
    expect(rows).toEqual(
      TEST_PAYMENT_NUMBERS.map((t) => ({
        kind: t.kind,
        number: t.number,
        description: t.description,
      })),
    );
  });

  it("carry valid check digits, and the test bank's routing number its checksum", () => {
    for (const t of TEST_PAYMENT_NUMBERS.filter((n) => n.kind === "card"))
      expect(luhnValid(t.number), t.number).toBe(true);
    expect(routingNumberValid(TEST_ROUTING_NUMBER)).toBe(true);
  });

  it("a number with one digit changed fails the Luhn check", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TEST_PAYMENT_NUMBERS.filter((n) => n.kind === "card").map((n) => n.number)),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        (number, at, delta) => {
          const i = at % number.length;
          const changed = `${number.slice(0, i)}${(Number(number[i]) + delta) % 10}${number.slice(i + 1)}`;
          expect(luhnValid(changed)).toBe(false);
        },
      ),
    );
  });

  it("each does what it says when attached and charged", async () => {
    const provider = builtinProvider(() => new Date("2026-06-15T00:00:00Z"));
    for (const t of TEST_PAYMENT_NUMBERS) {
      const source =
        t.kind === "card"
          ? { kind: "card" as const, number: t.number, expMonth: 6, expYear: 2026, cvc: "123" }
          : { kind: "bank" as const, routingNumber: TEST_ROUTING_NUMBER, accountNumber: t.number };
      if (t.attachDecline) {
        await expect(provider.attach(customer, source), t.id).rejects.toMatchObject({ code: "BAD_USER_INPUT" });
        continue;
      }
      const method = await provider.attach(customer, source);
      expect(method.last4).toBe(t.number.slice(-4));
      expect(JSON.stringify(method)).not.toContain(t.number);
      const outcome = await provider.charge({
        customer,
        methodRef: method.providerRef,
        amountCents: 100,
        currency: "usd",
        description: "test",
        idempotencyKey: "k",
      });
      expect(outcome.status, t.id).toBe(
        t.charge === "succeeds" ? "succeeded" : t.charge === "declines" ? "failed" : "requires_action",
      );
    }
  });
});
