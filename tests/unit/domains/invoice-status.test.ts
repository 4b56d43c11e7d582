import { describe, expect, it } from "vitest";
import { type InvoiceStatus, invoiceStatusAfter } from "../../../server/domains/billing/service.ts";

const all: InvoiceStatus[] = ["draft", "open", "paid", "uncollectible", "void"];
const allowed: Record<InvoiceStatus, InvoiceStatus[]> = {
  draft: ["open", "paid", "void"],
  open: ["paid", "uncollectible", "void"],
  uncollectible: ["paid", "void"],
  paid: [],
  void: [],
};

describe("an invoice's status", () => {
  for (const from of all) {
    for (const to of all) {
      const ok = allowed[from].includes(to);
      it(`${from} → ${to}: ${ok ? "allowed" : "refused"}`, () => {
        if (ok) expect(invoiceStatusAfter(from, to)).toBe(to);
        else expect(() => invoiceStatusAfter(from, to)).toThrow(`An invoice that is ${from} cannot become ${to}.`);
      });
    }
  }
});
