import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { findNetwork } from "../catalogue/networks.ts";

export type AddonKind = "ENDPOINT" | "ACCOUNT";
export type Interval = "MONTHLY" | "YEARLY";

export interface AddonPlan {
  slug: string;
  name: string;
  /** Integer minor units (cents) per pricePer. */
  price: number;
  pricePer: "MONTH";
  rpsLimit: number;
  monthlyRequestsLimit: number;
  features: { id: string; name: string; description: string }[];
}

export interface AddonRpcMethod {
  name: string;
  description: string;
  paramStructure: "BY_POSITION" | "BY_NAME";
  documentationUrl: string;
  arguments: { name: string; description: string; dataType: string; position: number; sample: string }[];
}

export interface AddonRestPath {
  id: string;
  httpMethod: string;
  url: string;
  description: string;
  documentationUrl: string;
  sampleBody: string;
  sampleQueryString: string;
  sampleUrl: string;
}

export interface CatalogueAddon {
  slug: string;
  name: string;
  description: string;
  longDescription: string;
  kind: AddonKind;
  status: "LIVE" | "COMING_SOON" | "RETIRED";
  iconUrl: string;
  isBeta: boolean;
  position: number;
  prelisted: boolean;
  hidden: boolean;
  autoselectAtCheckout: boolean;
  supportEmail: string;
  supportUrl: string;
  organizationName: string;
  marketplaceExId: string;
  usingCustomerEndpoints: boolean;
  categories: string[];
  badges: string[];
  networks: string[];
  gettingStartedInstructions: string;
  /** Methods the proxy refuses on an endpoint without this add-on. */
  gatedMethods: string[];
  /** Namespaces ("trace" for trace_*) whose every method the proxy refuses without this add-on. */
  gatedNamespaces: string[];
  /** The credit multiplier of this add-on's calls in usage. */
  creditMultiplier: number;
  plans: AddonPlan[];
  rpcMethods: AddonRpcMethod[];
  restPaths: AddonRestPath[];
}

export interface CatalogueBundle {
  slug: string;
  name: string;
  description: string;
  visible: boolean;
  discountPercent: number;
  allowedNetworks: string[];
  addons: { addon: string; plan: string }[];
  couponCode: string | null;
}

export interface AddonCatalogue {
  yearlyMonthsCharged: number;
  categories: { slug: string; name: string; description: string }[];
  badges: {
    id: string;
    name: string;
    description: string;
    primaryColor: string;
    secondaryColor: string;
    emoji: string;
  }[];
  addons: CatalogueAddon[];
  onboardingAddons: string[];
  bundles: CatalogueBundle[];
}

export const ADDON_CATALOGUE_FILE = "schemas/catalogue/addons.json";
const COUPON_CATALOGUE_FILE = "schemas/catalogue/coupons.json";
const SCHEMA_FILE = "schemas/catalogue/addons.schema.json";

export interface CatalogueProblem {
  file: string;
  pointer: string;
  reason: string;
}

/** The coupons as the add-on catalogue sees them: their codes, and what of them names an add-on. */
type CouponsFile = { coupons: { id: string; validFrom: string; validUntil: string; addons: string[] }[] };

/**
 * Every name the catalogue uses that it does not define, each at its JSON pointer; and the coupons' names
 * of add-ons and their windows (coupons.json, whose schema checks the rest).
 */
function referenceProblems(catalogue: AddonCatalogue, couponsFile: CouponsFile): CatalogueProblem[] {
  const problems: CatalogueProblem[] = [];
  const at = (pointer: string, reason: string) => problems.push({ file: ADDON_CATALOGUE_FILE, pointer, reason });
  const unique = (values: string[], pointer: (i: number) => string, what: string) => {
    const seen = new Set<string>();
    values.forEach((value, i) => {
      if (seen.has(value)) at(pointer(i), `${what} ${value} is defined twice.`);
      seen.add(value);
    });
  };
  const categories = new Set(catalogue.categories.map((c) => c.slug));
  const badges = new Set(catalogue.badges.map((b) => b.id));
  const addons = new Map(catalogue.addons.map((a) => [a.slug, a]));
  const coupons = new Set(couponsFile.coupons.map((c) => c.id));
  unique([...categories], (i) => `/categories/${i}/slug`, "The category");
  unique(
    catalogue.addons.map((a) => a.slug),
    (i) => `/addons/${i}/slug`,
    "The add-on",
  );
  unique(
    catalogue.addons.flatMap((a) => a.plans.map((p) => p.slug)),
    () => "/addons",
    "The plan",
  );
  unique(
    catalogue.addons.flatMap((a) => [...a.gatedMethods, ...a.gatedNamespaces.map((n) => `${n}_*`)]),
    () => "/addons",
    "The gated method or namespace",
  );
  catalogue.addons.forEach((addon, i) => {
    addon.categories.forEach((c, j) => {
      if (!categories.has(c)) at(`/addons/${i}/categories/${j}`, `No category ${c} in /categories.`);
    });
    addon.badges.forEach((b, j) => {
      if (!badges.has(b)) at(`/addons/${i}/badges/${j}`, `No badge ${b} in /badges.`);
    });
    addon.networks.forEach((n, j) => {
      if (!findNetwork(n))
        at(`/addons/${i}/networks/${j}`, `The network ${n} is not in schemas/catalogue/networks.json.`);
    });
    addon.gatedMethods.forEach((m, j) => {
      if (!addon.rpcMethods.some((r) => r.name === m))
        at(`/addons/${i}/gatedMethods/${j}`, `The gated method ${m} is not one of the add-on's rpcMethods.`);
    });
    addon.rpcMethods.forEach((method, j) => {
      method.arguments.forEach((argument, k) => {
        try {
          if (!argument.sample.includes("…")) JSON.parse(argument.sample);
        } catch {
          at(`/addons/${i}/rpcMethods/${j}/arguments/${k}/sample`, "The sample is not JSON.");
        }
      });
    });
  });
  catalogue.onboardingAddons.forEach((slug, i) => {
    if (!addons.has(slug)) at(`/onboardingAddons/${i}`, `No add-on ${slug} in /addons.`);
  });
  catalogue.bundles.forEach((bundle, i) => {
    bundle.addons.forEach((item, j) => {
      const addon = addons.get(item.addon);
      if (!addon) at(`/bundles/${i}/addons/${j}/addon`, `No add-on ${item.addon} in /addons.`);
      else if (!addon.plans.some((p) => p.slug === item.plan))
        at(`/bundles/${i}/addons/${j}/plan`, `The add-on ${item.addon} has no plan ${item.plan}.`);
    });
    bundle.allowedNetworks.forEach((n, j) => {
      if (!findNetwork(n))
        at(`/bundles/${i}/allowedNetworks/${j}`, `The network ${n} is not in schemas/catalogue/networks.json.`);
    });
    if (bundle.couponCode !== null && !coupons.has(bundle.couponCode))
      at(`/bundles/${i}/couponCode`, `No coupon ${bundle.couponCode} in /coupons.`);
  });
  const atCoupon = (pointer: string, reason: string) => problems.push({ file: COUPON_CATALOGUE_FILE, pointer, reason });
  const couponIds = new Set<string>();
  couponsFile.coupons.forEach((coupon, i) => {
    if (couponIds.has(coupon.id)) atCoupon(`/coupons/${i}/id`, `The coupon ${coupon.id} is defined twice.`);
    couponIds.add(coupon.id);
    if (!(Date.parse(coupon.validFrom) < Date.parse(coupon.validUntil)))
      atCoupon(`/coupons/${i}/validUntil`, "validUntil must be after validFrom.");
    (Array.isArray(coupon.addons) ? coupon.addons : []).forEach((slug, j) => {
      if (!addons.has(slug))
        atCoupon(`/coupons/${i}/addons/${j}`, `No add-on ${slug} in schemas/catalogue/addons.json.`);
    });
  });
  return problems;
}

/** The catalogue's problems: its schema's, then every reference it cannot resolve. */
export function addonCatalogueProblems(rootDir: string): CatalogueProblem[] {
  const read = (file: string): unknown => JSON.parse(readFileSync(path.join(rootDir, file), "utf8"));
  let data: unknown;
  try {
    data = read(ADDON_CATALOGUE_FILE);
  } catch (error) {
    return [{ file: ADDON_CATALOGUE_FILE, pointer: "", reason: (error as Error).message }];
  }
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats.default(ajv);
  const validate = ajv.compile(read(SCHEMA_FILE) as object);
  if (!validate(data)) {
    return (validate.errors ?? []).map((e) => ({
      file: ADDON_CATALOGUE_FILE,
      pointer: e.instancePath,
      reason: e.message ?? "is not valid",
    }));
  }
  let couponsFile: CouponsFile;
  try {
    couponsFile = read(COUPON_CATALOGUE_FILE) as CouponsFile;
  } catch (error) {
    return [{ file: COUPON_CATALOGUE_FILE, pointer: "", reason: (error as Error).message }];
  }
  // The coupons file's shape is its own schema's to check (catalogueProblems); the references need its lists.
  if (!Array.isArray(couponsFile.coupons)) return [];
  return referenceProblems(data as AddonCatalogue, couponsFile);
}
