// The add-on catalogue's checks (what `npm run validate` reports) and the one price of an install.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findAddon, findAddonPlan, findCoupon } from "../../../server/domains/addons/catalogue.ts";
import { addonCatalogueProblems } from "../../../server/domains/addons/catalogue-file.ts";
import { installPrice } from "../../../server/domains/addons/price.ts";

const root = path.resolve(import.meta.dirname, "../../..");
let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the catalogue with `change` applied, and its problems. */
// biome-ignore lint/suspicious/noExplicitAny: a test edits the catalogue's JSON freely, breaking its types on purpose.
function problemsAfter(change: (catalogue: Record<string, any>) => void) {
  dir = mkdtempSync(path.join(tmpdir(), "addon-catalogue-"));
  cpSync(path.join(root, "schemas/catalogue"), path.join(dir, "schemas/catalogue"), { recursive: true });
  const file = path.join(dir, "schemas/catalogue/addons.json");
  const catalogue = JSON.parse(readFileSync(file, "utf8"));
  change(catalogue);
  writeFileSync(file, JSON.stringify(catalogue));
  return addonCatalogueProblems(dir).map((p) => `${p.pointer}: ${p.reason}`);
}

describe("the add-on catalogue's checks", () => {
  it("the catalogue as checked in has no problems", () => {
    expect(addonCatalogueProblems(root)).toEqual([]);
  });

  it("names each broken reference at its pointer", () => {
    expect(problemsAfter((c) => (c.addons[0].categories = ["nope"]))).toEqual([
      "/addons/0/categories/0: No category nope in /categories.",
    ]);
    expect(problemsAfter((c) => (c.bundles[0].addons[0].plan = "nope"))).toEqual([
      "/bundles/0/addons/0/plan: The add-on token-api has no plan nope.",
    ]);
    expect(problemsAfter((c) => (c.addons[0].networks = ["moon-mainnet"]))).toEqual([
      "/addons/0/networks/0: The network moon-mainnet is not in schemas/catalogue/networks.json.",
    ]);
    expect(problemsAfter((c) => (c.bundles[0].couponCode = "NOPE99"))).toEqual([
      "/bundles/0/couponCode: No coupon NOPE99 in /coupons.",
    ]);
    expect(problemsAfter((c) => (c.addons[0].plans[0].price = 1.5))).toEqual([
      "/addons/0/plans/0/price: must be integer",
    ]);
  });
});

describe("installPrice", () => {
  const at = new Date("2026-11-29T00:00:00Z");
  const trace = findAddon("trace-debug");
  const pro = findAddonPlan("trace-debug-pro")?.plan;
  if (!trace || !pro) throw new Error("the catalogue lost trace-debug-pro");

  it("a plan per month, ten months a year, a coupon's percent rounded half up and an amount never above the price", () => {
    expect(installPrice(trace, pro, "MONTHLY", null, at)).toMatchObject({ listPrice: 4900, discount: 0, total: 4900 });
    expect(installPrice(trace, pro, "YEARLY", null, at)).toMatchObject({ listPrice: 49000, total: 49000 });
    expect(installPrice(trace, pro, "MONTHLY", findCoupon("BUILDERS20") ?? null, at)).toMatchObject({
      discount: 980,
      total: 3920,
      discountedIntervals: 3,
    });
    // 20% of 3 cents is 0.6: a cent, rounded half up; 20% of 2 cents is 0.4: nothing.
    expect(installPrice(trace, { price: 3 }, "MONTHLY", findCoupon("BUILDERS20") ?? null, at).discount).toBe(1);
    expect(installPrice(trace, { price: 2 }, "MONTHLY", findCoupon("BUILDERS20") ?? null, at).discount).toBe(0);
    expect(installPrice(trace, { price: 500 }, "MONTHLY", findCoupon("TRACE10") ?? null, at)).toMatchObject({
      discount: 500,
      total: 0,
      discountedIntervals: 1,
    });
  });

  it("a coupon applies only where and while it is valid", () => {
    expect(installPrice(trace, pro, "MONTHLY", findCoupon("LAUNCH2025") ?? null, at)).toMatchObject({
      discount: 0,
      couponCode: null,
    });
    expect(installPrice(trace, pro, "MONTHLY", findCoupon("DATAKIT") ?? null, at)).toMatchObject({
      discount: 0,
      couponCode: null,
    });
    const before = new Date("2025-12-31T00:00:00Z");
    expect(installPrice(trace, pro, "MONTHLY", findCoupon("BUILDERS20") ?? null, before).discount).toBe(0);
  });
});
