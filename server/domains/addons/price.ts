import { couponRefusal, intervalsCovered } from "../catalogue/coupons.ts";
import {
  type AddonPlan,
  addonCatalogue,
  type CatalogueAddon,
  type CatalogueCoupon,
  type Interval,
} from "./catalogue.ts";

export interface InstallPrice {
  /** The plan's price for one interval, in minor units (cents) of USD, before any coupon. */
  listPrice: number;
  /** What the coupon takes off one interval's price (never more than the list price). */
  discount: number;
  /** What one interval costs: listPrice − discount. */
  total: number;
  interval: Interval;
  /** How many intervals the discount lasts: 1 for ONCE, null for FOREVER (and when there is no discount). */
  discountedIntervals: number | null;
  couponCode: string | null;
}

/**
 * The one price of an install: its plan for the interval (a yearly plan charges yearlyMonthsCharged months),
 * less the coupon when it applies at `at`. Percentages round to the nearest cent, halves up. The billing
 * domain reads this; nothing else computes what an add-on costs. Throws nothing: a coupon that does not
 * apply simply takes nothing off (the install's service refuses it first, naming why).
 */
export function installPrice(
  addon: Pick<CatalogueAddon, "slug">,
  plan: Pick<AddonPlan, "price">,
  interval: Interval,
  coupon: CatalogueCoupon | null,
  at: Date,
): InstallPrice {
  const months = interval === "YEARLY" ? addonCatalogue.yearlyMonthsCharged : 1;
  const listPrice = plan.price * months;
  const applies = coupon !== null && couponRefusal(coupon, { product: "ADDON", addonSlug: addon.slug }, at) === null;
  let discount = 0;
  if (applies && coupon.percentOff !== null) discount = Math.floor((listPrice * coupon.percentOff + 50) / 100);
  else if (applies && coupon.amountOffCents !== null) discount = coupon.amountOffCents;
  discount = Math.min(discount, listPrice);
  const discountedIntervals = applies ? intervalsCovered(coupon, months) : null;
  return {
    listPrice,
    discount,
    total: listPrice - discount,
    interval,
    discountedIntervals,
    couponCode: applies ? coupon.id : null,
  };
}
