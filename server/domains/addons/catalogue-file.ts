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

export interface CatalogueCoupon {
  code: string;
  name: string;
  percentOff: number | null;
  amountOff: number | null;
  duration: "ONCE" | "REPEATING" | "FOREVER";
  durationInMonths: number | null;
  validFrom: string;
  validUntil: string;
  /** The add-ons it applies to; empty for every add-on. */
  addons: string[];
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
  coupons: CatalogueCoupon[];
  bundles: CatalogueBundle[];
}

export const ADDON_CATALOGUE_FILE = "schemas/catalogue/addons.json";
const SCHEMA_FILE = "schemas/catalogue/addons.schema.json";

export interface CatalogueProblem {
  file: string;
  pointer: string;
  reason: string;
}

/** Every name the catalogue uses that it does not define, each at its JSON pointer. */
function referenceProblems(catalogue: AddonCatalogue): CatalogueProblem[] {
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
  const coupons = new Set(catalogue.coupons.map((c) => c.code));
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
  unique(
    catalogue.coupons.map((c) => c.code),
    (i) => `/coupons/${i}/code`,
    "The coupon",
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
  catalogue.coupons.forEach((coupon, i) => {
    if ((coupon.percentOff === null) === (coupon.amountOff === null))
      at(`/coupons/${i}`, "A coupon takes exactly one of percentOff and amountOff.");
    if ((coupon.duration === "REPEATING") !== (coupon.durationInMonths !== null))
      at(`/coupons/${i}/durationInMonths`, "durationInMonths is given exactly when the duration is REPEATING.");
    if (!(Date.parse(coupon.validFrom) < Date.parse(coupon.validUntil)))
      at(`/coupons/${i}/validUntil`, "validUntil must be after validFrom.");
    coupon.addons.forEach((slug, j) => {
      if (!addons.has(slug)) at(`/coupons/${i}/addons/${j}`, `No add-on ${slug} in /addons.`);
    });
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
  return referenceProblems(data as AddonCatalogue);
}
