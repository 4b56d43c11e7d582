// The one coupon catalogue (schemas/catalogue/coupons.json), for subscriptions and add-ons alike, and the
// one rule of whether a code may be applied: billing and the marketplace both ask here.
import { readCheckedCatalogue } from "../../platform/catalogue-data.ts";
import { badInput } from "../../platform/errors.ts";

export type CouponProduct = "SUBSCRIPTION" | "ADDON";

/** A coupon as coupons.json declares it (its schema: coupons.schema.json). */
export interface CatalogueCoupon {
  /** The code a user types, upper case. */
  id: string;
  name: string;
  percentOff: number | null;
  amountOffCents: number | null;
  duration: "ONCE" | "REPEATING" | "FOREVER";
  durationInMonths: number | null;
  /** False: withdrawn (known, and refused). */
  valid: boolean;
  validFrom: string;
  validUntil: string;
  products: CouponProduct[];
  /** The add-ons it is limited to; empty for any. */
  addons: string[];
}

export const COUPON_CATALOGUE_FILE = "schemas/catalogue/coupons.json";

const coupons: ReadonlyMap<string, CatalogueCoupon> = new Map(
  readCheckedCatalogue<{ coupons: CatalogueCoupon[] }>("coupons").coupons.map((c) => [c.id, c]),
);

/** A code as the user typed it (any case, spaces around), or as it was stored. */
export const findCoupon = (code: string): CatalogueCoupon | undefined => coupons.get(code.trim().toUpperCase());

/** What a code is to be applied to: a subscription, an add-on (null: any add-on), or nothing named (a check). */
export type CouponUse = { product: "SUBSCRIPTION" } | { product: "ADDON"; addonSlug: string | null } | null;

/** Why the coupon may not be applied to `use` at `at`, or null when it may. */
export function couponRefusal(coupon: CatalogueCoupon, use: CouponUse, at: Date): string | null {
  const now = at.getTime();
  if (!coupon.valid) return `The coupon ${coupon.id} is no longer valid.`;
  if (now < Date.parse(coupon.validFrom)) return "This coupon is not valid yet.";
  if (now > Date.parse(coupon.validUntil)) return "This coupon has expired.";
  if (use && !coupon.products.includes(use.product))
    return use.product === "ADDON" ? "This coupon does not apply to add-ons." : "This coupon does not apply to plans.";
  const addonSlug = use?.product === "ADDON" ? use.addonSlug : null;
  if (addonSlug !== null && coupon.addons.length > 0 && !coupon.addons.includes(addonSlug))
    return "This coupon does not apply to this add-on.";
  return null;
}

/** A code the user gave, as a coupon they may apply to `use` now; otherwise BAD_USER_INPUT on `pointer`, saying why. */
export function usableCoupon(code: string, use: CouponUse, at: Date, pointer: string): CatalogueCoupon {
  const coupon = knownCoupon(code, pointer);
  const refusal = couponRefusal(coupon, use, at);
  if (refusal) throw badInput([{ pointer, message: refusal }]);
  return coupon;
}

/** A code the user gave, known to the catalogue (whether or not it may be applied); otherwise BAD_USER_INPUT. */
export function knownCoupon(code: string, pointer: string): CatalogueCoupon {
  const coupon = findCoupon(code);
  if (!coupon) throw badInput([{ pointer, message: "No coupon has this code." }]);
  return coupon;
}

/**
 * How many intervals of `intervalMonths` (1: monthly invoices or installs, 12: yearly) the discount lasts
 * from when it is applied: 1 for ONCE, the months it repeats for rounded up to whole intervals, null for
 * FOREVER.
 */
export function intervalsCovered(coupon: CatalogueCoupon, intervalMonths: number): number | null {
  if (coupon.duration === "FOREVER") return null;
  if (coupon.duration === "ONCE") return 1;
  return Math.ceil((coupon.durationInMonths ?? 1) / intervalMonths);
}
