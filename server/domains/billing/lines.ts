/**
 * A period's invoice lines, computed by one pure function (periodLines) that every answer uses: the
 * upcoming invoice preview, the invoice a closing period writes, its PDF. Lines come in this order: the
 * charges (base, prorations, overage, add-ons), the coupon's discount, the tax, then the account's credit
 * (decision 1771). Money is integer minor units;
 * the one rounding rule is half up on a whole fraction (roundShare), in BigInt so no product overflows.
 */

export type LineKind = "BASE" | "PRORATION" | "OVERAGE" | "ADDON" | "DISCOUNT" | "TAX" | "BALANCE";

export interface InvoiceLineDraft {
  kind: LineKind;
  description: string;
  /** Cents; a credit is negative. */
  amountCents: number;
  /** What was counted (credits for OVERAGE), when the line counts something. */
  quantity: number | null;
}

export interface CouponTerms {
  id: string;
  name: string;
  percentOff: number | null;
  amountOffCents: number | null;
}

/** Everything a period's bill is made of, read before the computation. */
export interface PeriodBillInput {
  /** The licence price billed in this period (0 when no licence starts in it), and its plan's name. */
  base: { planName: string; amountCents: number; trialCents: number } | null;
  /** Upgrade prorations recorded in the period, as recorded. */
  adjustments: { kind: "PRORATION"; description: string; amountCents: number }[];
  /** Credits used in the period, the allowance, and the overage price (null: no overage billed). */
  usage: { credits: number; allowance: number; centsPerMillion: number | null };
  addons: { description: string; amountCents: number }[];
  coupon: CouponTerms | null;
  /** Tax rate in basis points (1/100 of a percent). */
  taxRateBps: number;
  /**
   * The account's credit (a crypto top-up), in cents: applied last, after the discount and the tax, up
   * to what the invoice comes to (decision 1771). Absent: none.
   */
  balanceCents?: number;
}

export interface PeriodBill {
  lines: InvoiceLineDraft[];
  baseCents: number;
  overageCents: number;
  subtotalCents: number;
  discountCents: number;
  taxCents: number;
  /** The account's credit this bill takes (a BALANCE line of minus this), to be taken off the balance. */
  balanceAppliedCents: number;
  totalCents: number;
}

/** round(amount × part / whole), halves away from zero; whole > 0. */
export function roundShare(amount: number, part: number, whole: number): number {
  if (!Number.isSafeInteger(amount) || !Number.isSafeInteger(part) || !Number.isSafeInteger(whole) || whole <= 0) {
    throw new RangeError("roundShare takes safe integers and a positive whole");
  }
  const a = BigInt(amount) * BigInt(part);
  const w = BigInt(whole);
  const sign = a < 0n ? -1n : 1n;
  const magnitude = a < 0n ? -a : a;
  return Number(sign * ((2n * magnitude + w) / (2n * w)));
}

/** The share of a licence price for `remainingMs` of a licence `lengthMs` long (an upgrade's proration). */
export const prorate = (priceCents: number, remainingMs: number, lengthMs: number) =>
  roundShare(priceCents, Math.min(Math.max(remainingMs, 0), lengthMs), lengthMs);

/** Credits above the allowance, priced per million (0 where the plan bills no overage). */
export function overageCents(usage: PeriodBillInput["usage"]): number {
  if (usage.centsPerMillion === null) return 0;
  const over = Math.max(0, usage.credits - usage.allowance);
  return roundShare(over, usage.centsPerMillion, 1_000_000);
}

/** A coupon's discount on a subtotal: a percentage of it, or an amount, never more than it (nor below 0). */
export function discountCents(subtotalCents: number, coupon: CouponTerms | null): number {
  if (!coupon || subtotalCents <= 0) return 0;
  if (coupon.percentOff !== null) return roundShare(subtotalCents, coupon.percentOff, 100);
  return Math.min(coupon.amountOffCents ?? 0, subtotalCents);
}

/** Tax on what is charged after discounts (nothing on a credit). */
export const taxCents = (taxableCents: number, rateBps: number) =>
  taxableCents <= 0 ? 0 : roundShare(taxableCents, rateBps, 10_000);

/** The credit an invoice takes: the balance, never more than what it comes to (nothing of a credit note). */
export function balanceAppliedCents(dueCents: number, balanceCents: number): number {
  if (!Number.isSafeInteger(balanceCents) || balanceCents < 0) {
    throw new RangeError("an account's balance is a safe, non-negative number of cents");
  }
  return Math.min(balanceCents, Math.max(0, dueCents));
}

const percent = (bps: number) => `${(bps / 100).toFixed(2).replace(/\.?0+$/, "")}%`;

/** The one computation of a period's lines; the total is the sum of the lines. */
export function periodLines(input: PeriodBillInput): PeriodBill {
  const lines: InvoiceLineDraft[] = [];
  let baseCents = 0;
  if (input.base) {
    baseCents = input.base.amountCents - input.base.trialCents;
    lines.push({
      kind: "BASE",
      description: `${input.base.planName} plan`,
      amountCents: input.base.amountCents,
      quantity: null,
    });
    if (input.base.trialCents > 0) {
      lines.push({ kind: "BASE", description: "Free trial", amountCents: -input.base.trialCents, quantity: null });
    }
  }
  for (const a of input.adjustments)
    lines.push({ kind: a.kind, description: a.description, amountCents: a.amountCents, quantity: null });
  const overage = overageCents(input.usage);
  if (overage > 0) {
    const over = input.usage.credits - input.usage.allowance;
    lines.push({
      kind: "OVERAGE",
      description: `${over.toLocaleString("en-US")} credits above the plan's allowance`,
      amountCents: overage,
      quantity: over,
    });
  }
  for (const a of input.addons)
    lines.push({ kind: "ADDON", description: a.description, amountCents: a.amountCents, quantity: null });
  const subtotalCents = lines.reduce((sum, l) => sum + l.amountCents, 0);
  const discount = discountCents(subtotalCents, input.coupon);
  if (discount > 0 && input.coupon) {
    lines.push({ kind: "DISCOUNT", description: input.coupon.name, amountCents: -discount, quantity: null });
  }
  const tax = taxCents(subtotalCents - discount, input.taxRateBps);
  if (tax > 0)
    lines.push({ kind: "TAX", description: `Tax (${percent(input.taxRateBps)})`, amountCents: tax, quantity: null });
  const applied = balanceAppliedCents(
    lines.reduce((sum, l) => sum + l.amountCents, 0),
    input.balanceCents ?? 0,
  );
  if (applied > 0)
    lines.push({ kind: "BALANCE", description: "Account credit applied", amountCents: -applied, quantity: null });
  return {
    lines,
    baseCents,
    overageCents: overage,
    subtotalCents,
    discountCents: discount,
    taxCents: tax,
    balanceAppliedCents: applied,
    totalCents: lines.reduce((sum, l) => sum + l.amountCents, 0),
  };
}
