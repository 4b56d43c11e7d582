import DataLoader from "dataloader";
import { type Context, loaderOf } from "../../graphql/context.ts";
import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { publicBaseUrl } from "../../platform/http-headers.ts";
import { findNetwork } from "../catalogue/networks.ts";
import { endpointUrls } from "../endpoints/resolvers.ts";
import {
  addonCatalogue,
  type CatalogueAddon,
  type CatalogueBundle,
  findAddon,
  findCoupon,
  type Interval,
} from "./catalogue.ts";
import { installPrice } from "./price.ts";
import * as service from "./service.ts";

export interface AddonsApiDeps {
  events: DomainEvents;
  /** What this installation can serve (the networks with an archive node). */
  capacity: service.AddonCapacity;
}

/** A JSON-RPC request calling the method with its arguments' samples: what a code sample sends. */
function sampleRequest(method: CatalogueAddon["rpcMethods"][number]): string {
  const args = [...method.arguments].sort((a, b) => a.position - b.position);
  const value = (sample: string): unknown => {
    try {
      return JSON.parse(sample);
    } catch {
      return sample;
    }
  };
  const params =
    method.paramStructure === "BY_NAME"
      ? [Object.fromEntries(args.map((a) => [a.name, value(a.sample)]))]
      : args.map((a) => value(a.sample));
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method: method.name, params });
}

/** The catalogue's add-on as the API shows it; `installed` is the set of add-on slugs live on the account. */
function addonView(addon: CatalogueAddon, installed: ReadonlySet<string>) {
  return {
    id: addon.slug,
    name: addon.name,
    description: addon.description,
    longDescription: addon.longDescription,
    slug: addon.slug,
    status: addon.status,
    kind: addon.kind,
    iconUrl: addon.iconUrl,
    isBeta: addon.isBeta,
    categories: addon.categories,
    position: addon.position,
    prelisted: addon.prelisted,
    hidden: addon.hidden,
    autoselectAtCheckout: addon.autoselectAtCheckout,
    supportEmail: addon.supportEmail,
    supportUrl: addon.supportUrl,
    organizationName: addon.organizationName,
    chainNetworks: addon.networks,
    canonicalNetworks: [...new Set(addon.networks.map((n) => findNetwork(n)?.network.canonicalNetwork ?? n))],
    gettingStartedInstructions: addon.gettingStartedInstructions,
    isInstalled: installed.has(addon.slug),
    marketplaceExId: addon.marketplaceExId,
    usingCustomerEndpoints: addon.usingCustomerEndpoints,
    badges: addon.badges.map((id) => addonCatalogue.badges.find((b) => b.id === id)).filter((b) => b !== undefined),
    plans: addon.plans.map((p) => ({ ...p, id: p.slug })),
    rpcMethods: addon.rpcMethods.map((m) => ({
      id: m.name,
      name: m.name,
      description: m.description,
      numberOfArguments: m.arguments.length,
      paramStructure: m.paramStructure,
      documentationUrl: m.documentationUrl,
      arguments: m.arguments.map((a) => ({ ...a, id: `${m.name}:${a.name}` })),
      sampleRequest: sampleRequest(m),
    })),
    restPaths: addon.restPaths,
    startingPrice: Math.min(...addon.plans.map((p) => p.price)),
  };
}

/** The account's live add-on slugs, once per request. */
const installedSlugs = (ctx: Context, accountId: string) =>
  loaderOf(
    ctx,
    () =>
      new DataLoader<string, Set<string>>(async (accountIds) =>
        Promise.all(
          accountIds.map(async (id) => new Set((await service.liveInstalls(ctx.db, id)).map((r) => r.addonSlug))),
        ),
      ),
  ).load(accountId);

const planView = (addon: CatalogueAddon, slug: string) => {
  const plan = service.planOf(addon, slug);
  return {
    id: plan.slug,
    name: plan.name,
    price: plan.price,
    rpsLimit: plan.rpsLimit,
    monthlyRequestsLimit: plan.monthlyRequestsLimit,
  };
};

/**
 * An install as InstalledAddon, with its price from the one price function at `now`; `endpointUrl` is the
 * HTTP address of the endpoint it is on, which each method's code sample calls.
 */
function installedView(row: service.InstallRow, installed: ReadonlySet<string>, endpointUrl = "", now = new Date()) {
  const addon = service.addonBySlug(row.addonSlug);
  const interval = row.interval as Interval;
  const coupon = row.couponCode ? (findCoupon(row.couponCode) ?? null) : null;
  return {
    id: row.id,
    interval,
    isPendingDeactivation: row.deactivatesAt !== null,
    isPendingDowngrade: row.pendingPlanSlug !== null,
    plan: planView(addon, row.planSlug),
    addon: addonView(addon, installed),
    endpointId: row.endpointId,
    dashboardUrl: null,
    ssoUrl: null,
    accessUrl: null,
    disabledRpcMethodsOnCreation: row.disabledMethodsOnCreation,
    disableChanges: row.deactivatesAt !== null,
    installedRpcMethods: addon.rpcMethods.map((m) => ({
      id: m.name,
      name: m.name,
      description: m.description,
      isDisabled: row.disabledMethods.includes(m.name),
      automaticallyDisabled: false,
      endpointUrl,
      sampleRequest: sampleRequest(m),
    })),
    installedRestPaths: addon.restPaths,
    pendingPlan: row.pendingPlanSlug ? planView(addon, row.pendingPlanSlug) : null,
    deactivatesAt: row.deactivatesAt?.toISOString() ?? null,
    currentPeriodEnd: row.currentPeriodEnd.toISOString(),
    price: installPrice(addon, service.planOf(addon, row.planSlug), interval, coupon, now),
    createdAt: row.createdAt.toISOString(),
  };
}

function accountAddonView(row: service.InstallRow) {
  const addon = service.addonBySlug(row.addonSlug);
  const plan = service.planOf(addon, row.planSlug);
  return {
    id: row.id,
    addonId: addon.slug,
    addonName: addon.name,
    addonKind: addon.kind,
    addonSlug: addon.slug,
    organizationName: addon.organizationName,
    iconUrl: addon.iconUrl,
    supportUrl: addon.supportUrl,
    planId: plan.slug,
    planName: plan.name,
    planPrice: plan.price,
    planMonthlyRequestsLimit: plan.monthlyRequestsLimit,
    interval: row.interval as Interval,
    endpointsCount: row.endpointId ? 1 : 0,
    isPendingDeactivation: row.deactivatesAt !== null,
    isPendingDowngrade: row.pendingPlanSlug !== null,
    disableChanges: row.deactivatesAt !== null,
    endpointId: row.endpointId,
    // For AccountAddon.planMonthlyRequests, which the usage domain resolves.
    currentPeriodStart: row.currentPeriodStart,
  };
}

function bundleView(bundle: CatalogueBundle, installed: ReadonlySet<string>, now: Date) {
  const coupon = bundle.couponCode ? (findCoupon(bundle.couponCode) ?? null) : null;
  return {
    id: bundle.slug,
    name: bundle.name,
    description: bundle.description,
    slug: bundle.slug,
    visible: bundle.visible,
    discountPercent: bundle.discountPercent,
    allowedNetworks: bundle.allowedNetworks,
    marketplaceAddOns: bundle.addons.map((item) => addonView(service.addonBySlug(item.addon), installed)),
    couponCode: bundle.couponCode,
    coupon: coupon ? service.couponView(coupon, null, now) : null,
  };
}

const installedOn = async (ctx: Context, accountId: string, endpointIds: readonly string[]) => {
  const [rows, installed, endpoints] = await Promise.all([
    service.liveInstallsOnEndpoints(ctx.db, accountId, endpointIds),
    installedSlugs(ctx, accountId),
    service.endpointsOf(ctx.db, accountId, [...endpointIds]),
  ]);
  const base = publicBaseUrl(ctx.config, ctx.request);
  const urls = new Map(endpoints.map((e) => [e.id, endpointUrls(base, e.exId).httpUrl]));
  return endpointIds.map((id) =>
    rows.filter((r) => r.endpointId === id).map((r) => installedView(r, installed, urls.get(id))),
  );
};

/** An install a mutation answered with, its endpoint's address read for the code samples. */
async function oneInstalled(ctx: Context, accountId: string, row: service.InstallRow) {
  const installed = await installedSlugs(ctx, accountId);
  if (!row.endpointId) return installedView(row, installed);
  const [endpoint] = await service.endpointsOf(ctx.db, accountId, [row.endpointId]);
  const url = endpoint ? endpointUrls(publicBaseUrl(ctx.config, ctx.request), endpoint.exId).httpUrl : "";
  return installedView(row, installed, url);
}

/** Installs on endpoints listed in one answer, read in one query. */
const endpointInstalls = (ctx: Context) =>
  new DataLoader<{ accountId: string; endpointId: string }, ReturnType<typeof installedView>[], string>(
    async (keys) => {
      const accountId = keys[0]?.accountId ?? "";
      return installedOn(
        ctx,
        accountId,
        keys.map((k) => k.endpointId),
      );
    },
    { cacheKeyFn: (k) => k.endpointId },
  );

export const addonsResolvers = (deps: AddonsApiDeps): Resolvers => ({
  Addon: {
    serviceNote: field("VIEWER", ({ parent }) => {
      const addon = parent.slug === undefined ? undefined : findAddon(parent.slug);
      return addon ? service.serviceNote(addon, deps.capacity) : null;
    }),
  },
  Endpoint: {
    installedAddons: field("VIEWER", ({ ctx, accountId, parent }) =>
      loaderOf(ctx, endpointInstalls).load({ accountId, endpointId: parent.id }),
    ),
  },
  Query: {
    addons: field("VIEWER", async ({ ctx, accountId, args }) => {
      const installed = await installedSlugs(ctx, accountId);
      return service.listAddons(args).map((a) => addonView(a, installed));
    }),
    addon: field("VIEWER", async ({ ctx, accountId, args }) =>
      addonView(service.addonBySlug(args.slug), await installedSlugs(ctx, accountId)),
    ),
    addonCategories: field("VIEWER", () => service.categoriesWithCounts().map((c) => ({ ...c, id: c.slug }))),
    bundles: field("VIEWER", async ({ ctx, accountId }) => {
      const installed = await installedSlugs(ctx, accountId);
      const now = new Date();
      return service.visibleBundles().map((b) => bundleView(b, installed, now));
    }),
    onboardingAddons: field("VIEWER", async ({ ctx, accountId }) => {
      const installed = await installedSlugs(ctx, accountId);
      return service.onboardingAddons().map((a) => addonView(a, installed));
    }),
    networkInfo: field("VIEWER", async ({ ctx, accountId, args }) => {
      const installed = await installedSlugs(ctx, accountId);
      const info = service.networkInfo(args.network);
      return { ...info, addons: info.addons.map((a) => addonView(a, installed)) };
    }),
    activeAddons: field("VIEWER", async ({ ctx, accountId }) =>
      (await service.liveInstalls(ctx.db, accountId)).map(accountAddonView),
    ),
    installedAddons: field("VIEWER", async ({ ctx, accountId, args }) => {
      await service.endpointOf(ctx.db, accountId, args.endpointId);
      const [views] = await installedOn(ctx, accountId, [args.endpointId]);
      return views ?? [];
    }),
    addonPrice: field("VIEWER", ({ args }) =>
      service.priceOf(args.planId, args.interval ?? "MONTHLY", args.coupon, new Date()),
    ),
  },
  Mutation: {
    installAddon: fieldWithInput(
      "ADMIN",
      { schema: "addon#/$defs/installInput" },
      async ({ ctx, accountId, input }) => {
        return oneInstalled(
          ctx,
          accountId,
          await service.installAddon(ctx.db, deps.events, accountId, input, deps.capacity),
        );
      },
    ),
    installAccountAddon: fieldWithInput(
      "ADMIN",
      { schema: "addon#/$defs/installAccountInput" },
      async ({ ctx, accountId, input }) =>
        accountAddonView(await service.installAccountAddon(ctx.db, accountId, input)),
    ),
    changeAddonPlan: fieldWithInput(
      "ADMIN",
      { schema: "addon#/$defs/changePlanInput" },
      async ({ ctx, accountId, input }) =>
        oneInstalled(ctx, accountId, await service.changeAddonPlan(ctx.db, deps.events, accountId, input)),
    ),
    deleteAddon: fieldWithInput(
      "ADMIN",
      {
        schema: "addon#/$defs/deleteInput",
        of: (args) => ({ cancelationReason: args.cancelationReason, immediately: args.immediately ?? false }),
      },
      async ({ ctx, accountId, args, input }) =>
        oneInstalled(
          ctx,
          accountId,
          await service.deleteAddon(
            ctx.db,
            deps.events,
            accountId,
            args.addonId,
            input.cancelationReason,
            input.immediately ?? false,
            new Date(),
            args.endpointId,
          ),
        ),
    ),
    deactivateAddOnImmediately: field("ADMIN", async ({ ctx, accountId, args }) =>
      oneInstalled(
        ctx,
        accountId,
        await service.deactivateImmediately(ctx.db, deps.events, accountId, args.accountAddOnId),
      ),
    ),
    cancelDeactivation: field("ADMIN", async ({ ctx, accountId, args }) =>
      oneInstalled(ctx, accountId, await service.cancelDeactivation(ctx.db, deps.events, accountId, args.addonId)),
    ),
    // ADMIN, as the install it is checked for: a VIEWER's mutations are the self-service ones only.
    checkCouponCode: fieldWithInput(
      "ADMIN",
      {
        schema: "addon#/$defs/couponInput",
        of: (args) => ({ couponCode: args.couponCode, planId: args.planId ?? undefined }),
      },
      ({ input }) => service.checkCouponCode(input.couponCode, input.planId, new Date()),
    ),
    installBundle: fieldWithInput(
      "ADMIN",
      { schema: "addon#/$defs/installBundleInput" },
      async ({ ctx, accountId, input }) => {
        const rows = await service.installBundle(ctx.db, deps.events, accountId, input, deps.capacity);
        const [views] = await installedOn(ctx, accountId, [input.endpointId]);
        return (views ?? []).filter((view) => rows.some((r) => r.id === view.id));
      },
    ),
    trackBundle: fieldWithInput(
      "ADMIN",
      { schema: "addon#/$defs/trackBundleInput", of: (args) => ({ bundleId: args.bundleId, event: args.event }) },
      async ({ ctx, accountId, input }) => {
        const bundle = await service.trackBundle(ctx.db, accountId, input.bundleId, input.event);
        return { success: true, message: `${bundle.name}: ${input.event.toLowerCase()} recorded.` };
      },
    ),
    sendEvent: field("ADMIN", async ({ ctx, accountId, args }) => {
      await service.sendEvent(ctx.db, accountId, args.installId, args.endpointId);
      return { success: true, message: "The install's provisioning event was recorded." };
    }),
  },
});
