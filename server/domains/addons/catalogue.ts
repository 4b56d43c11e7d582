import { readFileSync } from "node:fs";
import path from "node:path";
import { checkOnce } from "../../platform/checked-once.ts";
import {
  ADDON_CATALOGUE_FILE,
  type AddonCatalogue,
  type AddonPlan,
  addonCatalogueProblems,
  type CatalogueAddon,
} from "./catalogue-file.ts";

export { type CatalogueCoupon, findCoupon } from "../catalogue/coupons.ts";
export type * from "./catalogue-file.ts";

const rootDir = path.resolve(import.meta.dirname, "../../..");

/**
 * The catalogue, checked: a service never starts on one with problems (npm run validate names them). The
 * check runs once for the same bytes (checkOnce).
 */
function loadAddonCatalogue(): AddonCatalogue {
  checkOnce(rootDir, "add-on catalogue", () => {
    const problems = addonCatalogueProblems(rootDir);
    if (problems.length > 0)
      throw new Error(
        `The add-on catalogue has problems:\n${problems.map((p) => `${p.file} ${p.pointer}: ${p.reason}`).join("\n")}`,
      );
  });
  return JSON.parse(readFileSync(path.join(rootDir, ADDON_CATALOGUE_FILE), "utf8")) as AddonCatalogue;
}

export const addonCatalogue: AddonCatalogue = loadAddonCatalogue();

const addonsBySlug: ReadonlyMap<string, CatalogueAddon> = new Map(addonCatalogue.addons.map((a) => [a.slug, a]));
const plansBySlug: ReadonlyMap<string, { addon: CatalogueAddon; plan: AddonPlan }> = new Map(
  addonCatalogue.addons.flatMap((addon) => addon.plans.map((plan) => [plan.slug, { addon, plan }] as const)),
);

export const findAddon = (slug: string) => addonsBySlug.get(slug);
export const findAddonPlan = (planSlug: string) => plansBySlug.get(planSlug);
/** An install's plan by its slug (a plan retired from the catalogue reads as the add-on's first). */
export const planOf = (addon: CatalogueAddon, planSlug: string): AddonPlan =>
  addon.plans.find((p) => p.slug === planSlug) ?? (addon.plans[0] as AddonPlan);
export const findBundle = (slug: string) => addonCatalogue.bundles.find((b) => b.slug === slug);

/** The add-on that owns a method at the proxy: by its name, then by its namespace (trace_ → trace). */
const gateByMethod: ReadonlyMap<string, CatalogueAddon> = new Map(
  addonCatalogue.addons.flatMap((a) => a.gatedMethods.map((m) => [m, a] as const)),
);
const gateByNamespace: ReadonlyMap<string, CatalogueAddon> = new Map(
  addonCatalogue.addons.flatMap((a) => a.gatedNamespaces.map((n) => [n, a] as const)),
);

export function addonOwningMethod(method: string): CatalogueAddon | undefined {
  const byName = gateByMethod.get(method);
  if (byName) return byName;
  const end = method.indexOf("_");
  return end > 0 ? gateByNamespace.get(method.slice(0, end)) : undefined;
}
