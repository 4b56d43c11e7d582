// The one coupon catalogue (schemas/catalogue/coupons.json) and the one rule of whether a code applies.
import { describe, expect, it } from "vitest";
import {
  couponRefusal,
  findCoupon,
  intervalsCovered,
  usableCoupon,
} from "../../../server/domains/catalogue/coupons.ts";

const at = new Date("2026-11-29T00:00:00Z");
const coupon = (code: string) => {
  const found = findCoupon(code);
  if (!found) throw new Error(`the catalogue lost ${code}`);
  return found;
};

describe("the coupon catalogue", () => {
  it("holds the plans' and the add-ons' codes, found in any case", () => {
    expect(findCoupon(" welcome20 ")?.id).toBe("WELCOME20");
    expect(findCoupon("builders20")?.id).toBe("BUILDERS20");
    expect(findCoupon("NOPE99")).toBeUndefined();
  });

  it("refuses a code withdrawn, outside its window, for what it is not for, or for an add-on it is not limited to", () => {
    expect(couponRefusal(coupon("SPRING2025"), { product: "SUBSCRIPTION" }, at)).toBe(
      "The coupon SPRING2025 is no longer valid.",
    );
    expect(couponRefusal(coupon("LAUNCH2025"), null, at)).toBe("This coupon has expired.");
    expect(couponRefusal(coupon("BUILDERS20"), null, new Date("2025-06-01T00:00:00Z"))).toBe(
      "This coupon is not valid yet.",
    );
    expect(couponRefusal(coupon("WELCOME20"), { product: "ADDON", addonSlug: null }, at)).toBe(
      "This coupon does not apply to add-ons.",
    );
    expect(couponRefusal(coupon("BUILDERS20"), { product: "SUBSCRIPTION" }, at)).toBe(
      "This coupon does not apply to plans.",
    );
    expect(couponRefusal(coupon("TRACE10"), { product: "ADDON", addonSlug: "token-api" }, at)).toBe(
      "This coupon does not apply to this add-on.",
    );
    expect(couponRefusal(coupon("TRACE10"), { product: "ADDON", addonSlug: "trace-debug" }, at)).toBeNull();
    expect(() => usableCoupon("TRACE10", { product: "SUBSCRIPTION" }, at, "/couponCode")).toThrow(
      expect.objectContaining({
        code: "BAD_USER_INPUT",
        fields: [{ pointer: "/couponCode", message: "This coupon does not apply to plans." }],
      }),
    );
  });

  it("lasts ONCE one interval, REPEATING its months in whole intervals, FOREVER always", () => {
    expect(intervalsCovered(coupon("TENOFF"), 1)).toBe(1);
    expect(intervalsCovered(coupon("WELCOME20"), 1)).toBe(3);
    expect(intervalsCovered(coupon("WELCOME20"), 12)).toBe(1);
    expect(intervalsCovered(coupon("PARTNER5"), 1)).toBeNull();
  });
});
