import { readCheckedCatalogue } from "../../platform/catalogue-data.ts";
import { badInput } from "../../platform/errors.ts";
import type { CouponTerms } from "./lines.ts";

/** A coupon as `schemas/catalogue/coupons.json` declares it (its schema: coupons.schema.json). */
export interface CatalogueCoupon extends CouponTerms {
  duration: "ONCE" | "REPEATING" | "FOREVER";
  durationInMonths: number | null;
  valid: boolean;
}

const coupons: ReadonlyMap<string, CatalogueCoupon> = new Map(
  readCheckedCatalogue<{ coupons: CatalogueCoupon[] }>("coupons").coupons.map((c) => [c.id, c]),
);

export const catalogueCoupon = (id: string): CatalogueCoupon | undefined => coupons.get(id);

/** A code the user typed, as a coupon that may be applied now; otherwise BAD_USER_INPUT on `pointer`. */
export function usableCoupon(code: string, pointer: string): CatalogueCoupon {
  const coupon = coupons.get(code.trim().toUpperCase());
  if (!coupon) throw badInput([{ pointer, message: "No coupon has this code." }]);
  if (!coupon.valid) throw badInput([{ pointer, message: `The coupon ${coupon.id} is no longer valid.` }]);
  return coupon;
}

/** How many invoices a coupon applies to from now: null for every one. */
export const invoicesCovered = (coupon: CatalogueCoupon): number | null =>
  coupon.duration === "FOREVER" ? null : coupon.duration === "ONCE" ? 1 : (coupon.durationInMonths ?? 1);
