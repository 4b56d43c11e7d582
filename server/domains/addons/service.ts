import type { UpstreamMap } from "../../dataplane/chain/nodes.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { AppError, badInput, conflict, foundOr } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { isUuid } from "../../platform/ids.ts";
import { type CatalogueCoupon, couponRefusal, findCoupon, knownCoupon, usableCoupon } from "../catalogue/coupons.ts";
import { findNetwork } from "../catalogue/networks.ts";
import { endpointsByIds, getEndpointOrFail } from "../endpoints/service.ts";
import {
  addonCatalogue,
  addonOwningMethod,
  type CatalogueAddon,
  findAddon,
  findAddonPlan,
  findBundle,
  type Interval,
  planOf,
} from "./catalogue.ts";
import { installPrice } from "./price.ts";
import * as store from "./store.ts";

export type { InstallRow } from "./store.ts";

/** The add-ons a user can find: listed (not hidden, not retired), by position. */
const listed = addonCatalogue.addons
  .filter((a) => !a.hidden && a.status !== "RETIRED")
  .sort((a, b) => a.position - b.position);

export interface AddonFilter {
  category?: string | null;
  network?: string | null;
  search?: string | null;
}

/** Listed add-ons narrowed by each filter given; an unknown category or network is named as the caller's mistake. */
export function listAddons(filter: AddonFilter): CatalogueAddon[] {
  const { category, network } = filter;
  const bad = [
    ...(category && !addonCatalogue.categories.some((c) => c.slug === category)
      ? [{ pointer: "/category", message: "No add-on category has this slug." }]
      : []),
    ...(network && !findNetwork(network)
      ? [{ pointer: "/network", message: "This network is not in the catalogue." }]
      : []),
  ];
  if (bad.length > 0) throw badInput(bad);
  const words = (filter.search ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  return listed.filter(
    (a) =>
      (!category || a.categories.includes(category)) &&
      (!network || a.networks.includes(network)) &&
      words.every((w) =>
        [a.name, a.description, a.slug, ...a.rpcMethods.map((m) => m.name)].some((text) =>
          text.toLowerCase().includes(w),
        ),
      ),
  );
}

export const addonBySlug = (slug: string) => foundOr(findAddon(slug), "The add-on");

export const categoriesWithCounts = () =>
  addonCatalogue.categories.map((c) => ({
    ...c,
    addonsCount: listed.filter((a) => a.categories.includes(c.slug)).length,
  }));

export const onboardingAddons = () => addonCatalogue.onboardingAddons.map(addonBySlug);

export const visibleBundles = () => addonCatalogue.bundles.filter((b) => b.visible);

export function networkInfo(network: string) {
  const found = findNetwork(network);
  if (!found) throw badInput([{ pointer: "/network", message: "This network is not in the catalogue." }]);
  return {
    network: found.network.value,
    chain: found.chain.chain,
    label: found.network.label,
    chainId: found.network.chainId,
    isTestnet: found.network.isTestnet,
    addons: listed.filter((a) => a.networks.includes(network)),
  };
}

/** A coupon as checkCouponCode shows it: whether it can be used now (for the plan's add-on, when one is named). */
export function couponView(coupon: CatalogueCoupon, addonSlug: string | null, now: Date) {
  const reason = couponRefusal(coupon, addonSlug === null ? null : { product: "ADDON", addonSlug }, now);
  return {
    id: coupon.id,
    valid: reason === null,
    name: coupon.name,
    amountOff: coupon.amountOffCents,
    percentOff: coupon.percentOff,
    duration: coupon.duration,
    durationInMonths: coupon.durationInMonths,
    reason,
  };
}

function knownPlan(planId: string, pointer: string) {
  const found = findAddonPlan(planId);
  if (!found) throw badInput([{ pointer, message: "No add-on plan has this id." }]);
  return found;
}

export function checkCouponCode(code: string, planId: string | null | undefined, now: Date) {
  const coupon = knownCoupon(code, "/couponCode");
  const addonSlug = planId ? knownPlan(planId, "/planId").addon.slug : null;
  return couponView(coupon, addonSlug, now);
}

/** A coupon the caller gave for an install (none: null), that may be applied to the add-on now. */
const installCoupon = (code: string | null | undefined, addon: CatalogueAddon, now: Date, pointer: string) =>
  code ? usableCoupon(code, { product: "ADDON", addonSlug: addon.slug }, now, pointer) : null;

export function priceOf(planId: string, interval: Interval, couponCode: string | null | undefined, now: Date) {
  const { addon, plan } = knownPlan(planId, "/planId");
  return installPrice(addon, plan, interval, installCoupon(couponCode, addon, now, "/coupon"), now);
}

function installable(addon: CatalogueAddon, kind: CatalogueAddon["kind"], pointer: string) {
  if (addon.status !== "LIVE")
    throw badInput([{ pointer, message: `${addon.name} is not available yet: it cannot be installed.` }]);
  if (addon.kind !== kind)
    throw badInput([
      {
        pointer,
        message:
          kind === "ENDPOINT"
            ? `${addon.name} is installed for the account, not on an endpoint.`
            : `${addon.name} is installed on an endpoint, not for the account.`,
      },
    ]);
}

export function periodEnd(start: Date, interval: Interval): Date {
  const end = new Date(start);
  if (interval === "YEARLY") end.setUTCFullYear(end.getUTCFullYear() + 1);
  else end.setUTCMonth(end.getUTCMonth() + 1);
  return end;
}

const alreadyInstalled = (addon: CatalogueAddon, where: string, pointer: string) =>
  new AppError("CONFLICT", `${addon.name} is already installed ${where}.`, [
    { pointer, message: `${addon.name} is already installed ${where}.` },
  ]);

/**
 * Waits until the endpoint's proxy serves the change here (its gates, and its add-on plans' limits), and
 * it is published to the other processes.
 */
const inForce = async (events: DomainEvents, accountId: string, endpointId: string | null) => {
  if (!endpointId) return;
  await Promise.all([
    events.emitAndWait("endpoint.changed", { accountId, endpointId }),
    events.emitAndWait("ratelimits.changed", { accountId, endpointId }),
  ]);
};

export interface InstallInput {
  endpointId: string;
  planId: string;
  stripeSourceId?: string | null;
  coupon?: string | null;
  interval?: Interval | null;
  disabledRpcMethodsOnCreation?: string[] | null;
}

/**
 * What this installation has to serve add-ons with that not every installation has: the networks with an
 * archive node beside their node (the Archive add-on's, dataplane/chain/archive.ts).
 */
export interface AddonCapacity {
  archiveNetworks(): ReadonlySet<string>;
}

/** The capacity of an installation whose chain nodes are `upstreams`: a network's archive node is beside its node. */
export const capacityOf = (upstreams: UpstreamMap): AddonCapacity => ({
  archiveNetworks: () =>
    new Set(
      addonCatalogue.addons
        .flatMap((a) => a.networks)
        .filter((network) => upstreams.get(network)?.archive !== undefined),
    ),
});

/** The networks an add-on lists where this installation cannot serve it (Archive: those without an archive node). */
export function unservedNetworks(addon: CatalogueAddon, capacity: AddonCapacity): string[] {
  if (addon.slug !== ARCHIVE_ADDON) return [];
  const served = capacity.archiveNetworks();
  return addon.networks.filter((n) => !served.has(n));
}

/** What the add-on's page says this installation cannot serve of it; null when it serves it wherever it lists. */
export function serviceNote(addon: CatalogueAddon, capacity: AddonCapacity): string | null {
  const missing = unservedNetworks(addon, capacity);
  if (missing.length === 0) return null;
  if (missing.length === addon.networks.length)
    return `No archive node is configured on this installation: ${addon.name} cannot be installed until one is (NODEPLANE_ARCHIVE_NODES=1 starts one beside each local chain node).`;
  return `No archive node is configured here for ${missing.join(", ")}: ${addon.name} cannot be installed on endpoints there.`;
}

/** Checks an endpoint install and writes it in `tx`; the caller puts it in force. */
async function writeEndpointInstall(
  tx: Executor,
  accountId: string,
  input: InstallInput,
  capacity: AddonCapacity,
  now: Date,
  pointers = { plan: "/planId", coupon: "/coupon" },
) {
  const { addon, plan } = knownPlan(input.planId, pointers.plan);
  installable(addon, "ENDPOINT", pointers.plan);
  const endpoint = await getEndpointOrFail(tx, accountId, input.endpointId);
  if (endpoint.status === "ARCHIVED") throw conflict("This endpoint is archived and can no longer be changed.");
  if (!addon.networks.includes(endpoint.network))
    throw badInput([{ pointer: "/endpointId", message: `${addon.name} is not available on ${endpoint.network}.` }]);
  if (unservedNetworks(addon, capacity).includes(endpoint.network))
    throw badInput([
      {
        pointer: pointers.plan,
        message: `${addon.name} cannot be installed on ${endpoint.network} here: no archive node is configured for it.`,
      },
    ]);
  const coupon = installCoupon(input.coupon, addon, now, pointers.coupon);
  const methods = new Set(addon.rpcMethods.map((m) => m.name));
  const disabled = input.disabledRpcMethodsOnCreation ?? [];
  disabled.forEach((method, i) => {
    if (!methods.has(method))
      throw badInput([
        { pointer: `/disabledRpcMethodsOnCreation/${i}`, message: `${method} is not a method of ${addon.name}.` },
      ]);
  });
  const interval = input.interval ?? "MONTHLY";
  const row = await store.insertInstall(tx, accountId, {
    endpointId: endpoint.id,
    addonSlug: addon.slug,
    planSlug: plan.slug,
    interval,
    couponCode: coupon?.id ?? null,
    paymentSourceId: input.stripeSourceId ?? null,
    disabledMethods: disabled,
    disabledMethodsOnCreation: disabled,
    currentPeriodStart: now,
    currentPeriodEnd: periodEnd(now, interval),
    createdAt: now,
  });
  if (!row) throw alreadyInstalled(addon, "on this endpoint", "/endpointId");
  return row;
}

export async function installAddon(
  db: Db,
  events: DomainEvents,
  accountId: string,
  input: InstallInput,
  capacity: AddonCapacity,
  now = new Date(),
) {
  const row = await db.transaction((tx) => writeEndpointInstall(tx, accountId, input, capacity, now));
  await inForce(events, accountId, row.endpointId);
  return row;
}

export async function installAccountAddon(
  db: Db,
  accountId: string,
  input: Omit<InstallInput, "endpointId" | "disabledRpcMethodsOnCreation">,
  now = new Date(),
) {
  const { addon, plan } = knownPlan(input.planId, "/planId");
  installable(addon, "ACCOUNT", "/planId");
  const coupon = installCoupon(input.coupon, addon, now, "/coupon");
  const interval = input.interval ?? "MONTHLY";
  const row = await store.insertInstall(db, accountId, {
    endpointId: null,
    addonSlug: addon.slug,
    planSlug: plan.slug,
    interval,
    couponCode: coupon?.id ?? null,
    paymentSourceId: input.stripeSourceId ?? null,
    currentPeriodStart: now,
    currentPeriodEnd: periodEnd(now, interval),
    createdAt: now,
  });
  if (!row) throw alreadyInstalled(addon, "for this account", "/planId");
  return row;
}

export async function liveInstallOrFail(db: Executor, accountId: string, id: string) {
  return foundOr(isUuid(id) ? await store.liveInstall(db, accountId, id) : undefined, "The installed add-on");
}

/** Runs one transition of a live install under its row lock, then puts it in force at the proxy. */
async function transition(
  db: Db,
  events: DomainEvents,
  accountId: string,
  id: string,
  change: (row: store.InstallRow, tx: Executor) => Promise<store.InstallRow>,
  endpointId?: string | null,
) {
  const row = await db.transaction(async (tx) => {
    const live = isUuid(id) ? await store.lockLiveInstall(tx, accountId, id) : undefined;
    // An install named under another endpoint (REST's nested path) is not found there.
    const locked = foundOr(
      live && (endpointId == null || live.endpointId === endpointId) ? live : undefined,
      "The installed add-on",
    );
    return change(locked, tx);
  });
  await inForce(events, accountId, row.endpointId);
  return row;
}

export interface ChangePlanInput {
  addonId: string;
  /** The endpoint the install must be on, when given. */
  endpointId?: string | null;
  currentPlanId: string;
  newPlanId: string;
  stripeSourceId?: string | null;
  interval: Interval;
}

/** An upgrade (the new plan costs as much or more per interval) applies at once; a downgrade at the period's end. */
export function changeAddonPlan(
  db: Db,
  events: DomainEvents,
  accountId: string,
  input: ChangePlanInput,
  now = new Date(),
) {
  return transition(
    db,
    events,
    accountId,
    input.addonId,
    async (row, tx) => {
      const addon = addonBySlug(row.addonSlug);
      if (row.deactivatesAt)
        throw conflict(`${addon.name} is being removed: cancel the removal before changing its plan.`);
      if (input.currentPlanId !== row.planSlug)
        throw badInput([{ pointer: "/currentPlanId", message: "This is not the install's current plan." }]);
      const { addon: newAddon, plan: newPlan } = knownPlan(input.newPlanId, "/newPlanId");
      if (newAddon.slug !== addon.slug)
        throw badInput([{ pointer: "/newPlanId", message: `This is not a plan of ${addon.name}.` }]);
      if (newPlan.slug === row.planSlug && input.interval === row.interval)
        throw badInput([{ pointer: "/newPlanId", message: "The install is on this plan already." }]);
      const current = planOf(addon, row.planSlug);
      const coupon = row.couponCode ? (findCoupon(row.couponCode) ?? null) : null;
      const before = installPrice(addon, current, row.interval as Interval, coupon, now).listPrice;
      const after = installPrice(addon, newPlan, input.interval, coupon, now).listPrice;
      const paymentSourceId = input.stripeSourceId ?? row.paymentSourceId;
      if (after >= before) {
        await store.recordPlanChange(tx, accountId, {
          installId: row.id,
          changedAt: now,
          fromPlanSlug: row.planSlug,
          fromInterval: row.interval,
          toPlanSlug: newPlan.slug,
          toInterval: input.interval,
        });
        return store.updateInstall(tx, accountId, row.id, {
          planSlug: newPlan.slug,
          interval: input.interval,
          pendingPlanSlug: null,
          paymentSourceId,
        });
      }
      return store.updateInstall(tx, accountId, row.id, { pendingPlanSlug: newPlan.slug, paymentSourceId });
    },
    input.endpointId,
  );
}

export { planOf };

/** Removal: at the period's end (pending deactivation) or, when `immediately`, at once. */
export function deleteAddon(
  db: Db,
  events: DomainEvents,
  accountId: string,
  id: string,
  cancelationReason: string,
  immediately: boolean,
  now = new Date(),
  endpointId?: string | null,
) {
  const reason = cancelationReason.trim();
  if (!reason) throw badInput([{ pointer: "/cancelationReason", message: "Say why the add-on is removed." }]);
  return transition(
    db,
    events,
    accountId,
    id,
    async (row, tx) => {
      if (immediately) return store.updateInstall(tx, accountId, row.id, { endedAt: now, cancelationReason: reason });
      if (row.deactivatesAt) throw conflict("This add-on is already being removed at the period's end.");
      return store.updateInstall(tx, accountId, row.id, {
        deactivatesAt: row.currentPeriodEnd,
        cancelationReason: reason,
      });
    },
    endpointId,
  );
}

export function deactivateImmediately(db: Db, events: DomainEvents, accountId: string, id: string, now = new Date()) {
  return transition(db, events, accountId, id, (row, tx) =>
    store.updateInstall(tx, accountId, row.id, { endedAt: now, deactivatesAt: row.deactivatesAt ?? now }),
  );
}

/** Keeps an install pending deactivation, or else its plan pending downgrade. */
export function cancelDeactivation(db: Db, events: DomainEvents, accountId: string, id: string) {
  return transition(db, events, accountId, id, (row, tx) => {
    if (row.deactivatesAt)
      return store.updateInstall(tx, accountId, row.id, { deactivatesAt: null, cancelationReason: null });
    if (row.pendingPlanSlug) return store.updateInstall(tx, accountId, row.id, { pendingPlanSlug: null });
    throw conflict("This add-on has no removal or downgrade pending.");
  });
}

/** Every add-on of the bundle on the endpoint, each on the bundle's plan with the bundle's coupon: all or none. */
export async function installBundle(
  db: Db,
  events: DomainEvents,
  accountId: string,
  input: { bundleId: string; endpointId: string; stripeSourceId?: string | null; interval?: Interval | null },
  capacity: AddonCapacity,
  now = new Date(),
) {
  const bundle = findBundle(input.bundleId);
  if (!bundle) throw badInput([{ pointer: "/bundleId", message: "No bundle has this id." }]);
  const rows = await db.transaction(async (tx) => {
    const endpoint = await getEndpointOrFail(tx, accountId, input.endpointId);
    if (bundle.allowedNetworks.length > 0 && !bundle.allowedNetworks.includes(endpoint.network))
      throw badInput([{ pointer: "/endpointId", message: `${bundle.name} is not available on ${endpoint.network}.` }]);
    const written = [];
    for (const item of bundle.addons) {
      written.push(
        await writeEndpointInstall(
          tx,
          accountId,
          {
            endpointId: endpoint.id,
            planId: item.plan,
            coupon: bundle.couponCode,
            interval: input.interval,
            stripeSourceId: input.stripeSourceId,
          },
          capacity,
          now,
          { plan: "/bundleId", coupon: "/bundleId" },
        ),
      );
    }
    await store.recordEvent(tx, accountId, { kind: "BUNDLE_INSTALLED", subject: bundle.slug, endpointId: endpoint.id });
    return written;
  });
  await inForce(events, accountId, input.endpointId);
  return rows;
}

export async function trackBundle(db: Db, accountId: string, bundleId: string, event: "VIEWED" | "CHECKOUT") {
  const bundle = findBundle(bundleId);
  if (!bundle) throw badInput([{ pointer: "/bundleId", message: "No bundle has this id." }]);
  await store.recordEvent(db, accountId, { kind: `BUNDLE_${event}`, subject: bundle.slug });
  return bundle;
}

/** Records that the install's provisioning was sent for the endpoint it is installed on. */
export async function sendEvent(db: Db, accountId: string, installId: string, endpointId: string) {
  const row = await liveInstallOrFail(db, accountId, installId);
  if (row.endpointId !== endpointId)
    throw badInput([{ pointer: "/endpointId", message: "The add-on is not installed on this endpoint." }]);
  await store.recordEvent(db, accountId, { kind: "INSTALL_PROVISIONED", subject: row.id, endpointId });
  return row;
}

/**
 * Turns one of an installed add-on's methods off or on for the endpoint (toggleRpcMethod's add-on half);
 * undefined when no live install on the endpoint has the method.
 */
export async function toggleAddonMethod(
  db: Db,
  events: DomainEvents,
  accountId: string,
  endpointId: string,
  method: string,
) {
  const owner =
    addonOwningMethod(method) ?? addonCatalogue.addons.find((a) => a.rpcMethods.some((m) => m.name === method));
  if (!owner) return undefined;
  const described = owner.rpcMethods.find((m) => m.name === method);
  if (!described) return undefined;
  const [install] = (await store.liveInstallsOnEndpoints(db, accountId, [endpointId])).filter(
    (r) => r.addonSlug === owner.slug,
  );
  if (!install) return undefined;
  const row = await transition(db, events, accountId, install.id, (locked, tx) =>
    store.updateInstall(tx, accountId, locked.id, {
      disabledMethods: locked.disabledMethods.includes(method)
        ? locked.disabledMethods.filter((m) => m !== method)
        : [...locked.disabledMethods, method],
    }),
  );
  return {
    id: method,
    name: method,
    description: described.description,
    disabled: row.disabledMethods.includes(method),
  };
}

/**
 * The period's end for installs that were waiting for it: removals take effect, downgrades apply. Every
 * API process runs it; the row lock and the re-read make a second runner skip what the first settled.
 */
export async function settleDueInstalls(db: Db, events: DomainEvents, now = new Date()) {
  for (const due of await store.installsDueAt(db, now)) {
    const settled = await db.transaction(async (tx) => {
      const locked = await store.lockLiveInstall(tx, due.accountId, due.id);
      if (!locked) return undefined;
      if (locked.deactivatesAt && locked.deactivatesAt <= now)
        return store.updateInstall(tx, due.accountId, locked.id, { endedAt: locked.deactivatesAt });
      if (!locked.pendingPlanSlug || locked.currentPeriodEnd > now) return undefined;
      await store.recordPlanChange(tx, due.accountId, {
        installId: locked.id,
        changedAt: locked.currentPeriodEnd,
        fromPlanSlug: locked.planSlug,
        fromInterval: locked.interval,
        toPlanSlug: locked.pendingPlanSlug,
        toInterval: locked.interval,
      });
      return store.updateInstall(tx, due.accountId, locked.id, {
        planSlug: locked.pendingPlanSlug,
        pendingPlanSlug: null,
        currentPeriodStart: locked.currentPeriodEnd,
        currentPeriodEnd: periodEnd(locked.currentPeriodEnd, locked.interval as Interval),
      });
    });
    if (settled) await inForce(events, settled.accountId, settled.endpointId);
  }
}

export const endpointOf = getEndpointOrFail;
export const endpointsOf = endpointsByIds;

/**
 * What each live endpoint install's plan allows: its rps, and its monthly requests over the add-on's
 * methods counted in the account's billing period (`period`: where the subscription row puts it).
 */
export async function addonLimitRows(db: Executor, scope: { accountId: string; endpointId: string } | null) {
  return (await store.installsForLimits(db, scope)).flatMap((row) => {
    const addon = findAddon(row.addonSlug);
    if (!addon || !row.endpointId) return [];
    const plan = planOf(addon, row.planSlug);
    return [
      {
        accountId: row.accountId,
        endpointId: row.endpointId,
        installId: row.id,
        addonName: addon.name,
        methods: [...new Set([...addon.gatedMethods, ...addon.rpcMethods.map((m) => m.name)])],
        rpsLimit: plan.rpsLimit,
        monthlyRequestsLimit: plan.monthlyRequestsLimit,
        period: { currentPeriodStart: row.currentPeriodStart, currentPeriodEnd: row.currentPeriodEnd },
      },
    ];
  });
}

/** The account's installs live at some time in the period, each with its plan changes (oldest first): what billing charges. */
/** An account's installs live in a period, with their plan changes, as one SQL value (installsInPeriodOf reads it). */
export const installsInPeriodJson = store.installsInPeriodJson;
export const installsInPeriodOf = store.installsInPeriodOf;
export type InstallInPeriod = store.InstallInPeriod;

/** The installs live in each account's own period, with their plan changes: by account, those with installs only. */
export async function installsInPeriods(
  db: Executor,
  periods: readonly { accountId: string; start: Date; end: Date }[],
) {
  const byAccount = new Map<string, store.InstallInPeriod[]>();
  if (periods.length === 0) return byAccount;
  const own = new Map(periods.map((p) => [p.accountId, p]));
  const span = {
    start: new Date(Math.min(...periods.map((p) => p.start.getTime()))),
    end: new Date(Math.max(...periods.map((p) => p.end.getTime()))),
  };
  const installs = (await store.installsOfAccountsLiveIn(db, [...own.keys()], span)).filter((i) => {
    const period = own.get(i.accountId);
    return period !== undefined && i.createdAt < period.end && (i.endedAt === null || i.endedAt > period.start);
  });
  if (installs.length === 0) return byAccount;
  const changes = await planChangesOfAccounts(db, installs);
  for (const install of installs)
    byAccount.set(install.accountId, [
      ...(byAccount.get(install.accountId) ?? []),
      { install, changes: changes.filter((c) => c.installId === install.id) },
    ]);
  return byAccount;
}

/** The plan changes of installs of several accounts, each read with its account. */
async function planChangesOfAccounts(db: Executor, installs: readonly { id: string; accountId: string }[]) {
  const byAccount = new Map<string, string[]>();
  for (const i of installs) byAccount.set(i.accountId, [...(byAccount.get(i.accountId) ?? []), i.id]);
  const all = await Promise.all([...byAccount].map(([accountId, ids]) => store.planChangesOf(db, accountId, ids)));
  return all.flat();
}

export type AddonLimitRow = Awaited<ReturnType<typeof addonLimitRows>>[number];
export const liveInstalls = store.liveInstalls;
export const liveInstallsOnEndpoints = store.liveInstallsOnEndpoints;

/** The add-on whose install sends an endpoint's calls at old blocks to the archive node (chain/archive.ts). */
export const ARCHIVE_ADDON = "archive";

/**
 * What the proxy must refuse or turn off on each endpoint named: every gated method and namespace of an
 * add-on not live there, by the add-on's name, and the installed add-ons' methods turned off; and whether
 * it reads old state from the archive node (the Archive add-on is live there).
 */
export async function addonLocksOf(db: Executor, endpointIds?: readonly string[]) {
  const installs = await store.installsForProxy(db, endpointIds);
  const byEndpoint = new Map<string, { installed: Set<string>; disabled: string[] }>();
  for (const i of installs) {
    if (!i.endpointId) continue;
    const entry = byEndpoint.get(i.endpointId) ?? { installed: new Set<string>(), disabled: [] };
    entry.installed.add(i.addonSlug);
    entry.disabled.push(...i.disabledMethods);
    byEndpoint.set(i.endpointId, entry);
  }
  return (endpointId: string) => {
    const entry = byEndpoint.get(endpointId);
    const locked = addonCatalogue.addons.filter((a) => !entry?.installed.has(a.slug));
    return {
      lockedMethods: locked.flatMap((a) => a.gatedMethods.map((m) => [m, a.name] as [string, string])),
      lockedNamespaces: locked.flatMap((a) => a.gatedNamespaces.map((n) => [n, a.name] as [string, string])),
      disabledMethods: entry?.disabled ?? [],
      archive: entry?.installed.has(ARCHIVE_ADDON) ?? false,
    };
  };
}
