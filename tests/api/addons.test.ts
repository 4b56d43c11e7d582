// The add-on marketplace through the API: the catalogue's queries, installs and their transitions, the
// price of an install, and every refusal naming its field with nothing written.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";

const ctx = useTestApp();

const installedFields = `id interval isPendingDeactivation isPendingDowngrade endpointId disableChanges
  plan { id name price rpsLimit monthlyRequestsLimit } pendingPlan { id } deactivatesAt currentPeriodEnd
  addon { slug name isInstalled } installedRpcMethods { name isDisabled } disabledRpcMethodsOnCreation
  price { listPrice discount total interval discountedIntervals couponCode }`;

async function newEndpoint(client: GqlClient, network = "ethereum-sepolia") {
  const chain = network.split("-")[0];
  const data = await client.gqlOk<{ createEndpoint: { id: string; exId: string } }>(
    `mutation($c: String!, $n: String!) { createEndpoint(input: { chain: $c, network: $n }) { id exId } }`,
    { c: chain, n: network },
  );
  return data.createEndpoint;
}

interface Installed {
  id: string;
  interval: string;
  isPendingDeactivation: boolean;
  isPendingDowngrade: boolean;
  endpointId: string | null;
  disableChanges: boolean;
  plan: { id: string; price: number };
  pendingPlan: { id: string } | null;
  deactivatesAt: string | null;
  currentPeriodEnd: string;
  addon: { slug: string; isInstalled: boolean };
  installedRpcMethods: { name: string; isDisabled: boolean }[];
  disabledRpcMethodsOnCreation: string[];
  price: {
    listPrice: number;
    discount: number;
    total: number;
    discountedIntervals: number | null;
    couponCode: string | null;
  };
}

const install = (client: GqlClient, input: Record<string, unknown>) =>
  client.gql<{ installAddon: Installed }>(
    `mutation($input: InstallAddonInput!) { installAddon(input: $input) { ${installedFields} } }`,
    { input },
  );

async function installOk(client: GqlClient, input: Record<string, unknown>): Promise<Installed> {
  const result = await install(client, input);
  if (result.errors?.length || !result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.installAddon;
}

async function installCount(accountId: string): Promise<number> {
  const db = new pg.Client({ connectionString: ctx.app.database.url });
  await db.connect();
  try {
    const { rows } = await db.query("select count(*)::int as n from addon_installs where account_id = $1", [accountId]);
    return rows[0].n;
  } finally {
    await db.end();
  }
}

function fieldError(result: { errors?: { extensions?: Record<string, unknown> }[] }) {
  const extensions = result.errors?.[0]?.extensions ?? {};
  return {
    code: extensions.code,
    pointers: ((extensions.fields ?? []) as { pointer: string }[]).map((f) => f.pointer),
  };
}

describe("the catalogue", () => {
  it("lists add-ons by category, network and search, each with every field of the spec", async () => {
    const { client } = await signUp(ctx.app);
    const all = await client.gqlOk<{ addons: { slug: string; plans: { id: string; price: number }[] }[] }>(
      `{ addons { slug name description longDescription status kind iconUrl isBeta categories position prelisted hidden
        autoselectAtCheckout supportEmail supportUrl organizationName chainNetworks canonicalNetworks
        gettingStartedInstructions isInstalled marketplaceExId usingCustomerEndpoints startingPrice
        badges { id name description primaryColor secondaryColor emoji }
        plans { id name price pricePer rpsLimit monthlyRequestsLimit features { id name description } }
        rpcMethods { id name description numberOfArguments paramStructure documentationUrl sampleRequest
          arguments { id name description dataType position sample } }
        restPaths { id httpMethod url description documentationUrl sampleBody sampleQueryString sampleUrl } } }`,
    );
    const slugs = all.addons.map((a) => a.slug);
    expect(slugs).toEqual(expect.arrayContaining(["trace-debug", "archive", "token-api", "nft-api"]));
    for (const addon of all.addons) for (const plan of addon.plans) expect(Number.isInteger(plan.price)).toBe(true);

    const debugging = await client.gqlOk<{ addons: { slug: string }[] }>(`{ addons(category: "debugging") { slug } }`);
    expect(debugging.addons.map((a) => a.slug)).toEqual(["trace-debug"]);
    const nft = await client.gqlOk<{ addons: { slug: string }[] }>(`{ addons(search: "fetchNFTs") { slug } }`);
    expect(nft.addons.map((a) => a.slug)).toEqual(["nft-api"]);
    const solana = await client.gqlOk<{ addons: { slug: string }[] }>(`{ addons(network: "solana-mainnet") { slug } }`);
    expect(solana.addons).toEqual([]);
    const unknown = await client.gql(`{ addons(category: "nope") { slug } }`);
    expect(fieldError(unknown)).toEqual({ code: "BAD_USER_INPUT", pointers: ["/category"] });
  });

  it("one add-on by slug, categories, bundles with coupons, onboarding add-ons and a network's add-ons", async () => {
    const { client } = await signUp(ctx.app);
    const one = await client.gqlOk<{ addon: { name: string; rpcMethods: { name: string; sampleRequest: string }[] } }>(
      `{ addon(slug: "token-api") { name rpcMethods { name sampleRequest } } }`,
    );
    expect(one.addon.name).toBe("Token API");
    const sample = JSON.parse(one.addon.rpcMethods[0]?.sampleRequest ?? "{}");
    expect(sample).toMatchObject({
      jsonrpc: "2.0",
      method: "qn_getWalletTokenBalance",
      params: [{ wallet: expect.any(String) }],
    });
    expect((await client.gql(`{ addon(slug: "nope") { name } }`)).errors?.[0]?.extensions?.code).toBe("NOT_FOUND");

    const rest = await client.gqlOk<{
      addonCategories: { slug: string; addonsCount: number }[];
      bundles: {
        slug: string;
        marketplaceAddOns: { slug: string }[];
        coupon: { valid: boolean; percentOff: number };
      }[];
      onboardingAddons: { slug: string }[];
      networkInfo: { chainId: number; addons: { slug: string }[] };
    }>(`{ addonCategories { slug addonsCount } bundles { slug marketplaceAddOns { slug } coupon { valid percentOff } }
        onboardingAddons { slug } networkInfo(network: "ethereum-sepolia") { chainId addons { slug } } }`);
    expect(rest.addonCategories.find((c) => c.slug === "data")?.addonsCount).toBe(3);
    const dataKit = rest.bundles.find((b) => b.slug === "data-kit");
    expect(dataKit?.marketplaceAddOns.map((a) => a.slug)).toEqual(["token-api", "nft-api"]);
    expect(dataKit?.coupon).toEqual({ valid: true, percentOff: 25 });
    expect(rest.onboardingAddons.map((a) => a.slug)).toEqual(["trace-debug", "token-api"]);
    expect(rest.networkInfo.chainId).toBe(11155111);
    expect(rest.networkInfo.addons.map((a) => a.slug)).toContain("trace-debug");
  });

  it("checks coupons: valid only where and while they apply", async () => {
    const { client } = await signUp(ctx.app);
    const check = (code: string, planId?: string) =>
      client.gql<{ checkCouponCode: { valid: boolean; reason: string | null; name: string } }>(
        `mutation($c: String!, $p: ID) { checkCouponCode(couponCode: $c, planId: $p) { valid reason name } }`,
        { c: code, p: planId },
      );
    expect((await check("BUILDERS20")).data?.checkCouponCode.valid).toBe(true);
    expect((await check("TRACE10", "trace-debug-pro")).data?.checkCouponCode.valid).toBe(true);
    expect((await check("TRACE10", "token-api-growth")).data?.checkCouponCode).toMatchObject({
      valid: false,
      reason: "This coupon does not apply to this add-on.",
    });
    expect((await check("LAUNCH2025")).data?.checkCouponCode).toMatchObject({
      valid: false,
      reason: "This coupon has expired.",
    });
    expect(fieldError(await check("NOPE99"))).toEqual({ code: "BAD_USER_INPUT", pointers: ["/couponCode"] });
  });
});

describe("installs", () => {
  it("install, show it on the endpoint and the account, upgrade, downgrade pending, removal pending and cancelled, removal at once", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await newEndpoint(user.client);
    const installed = await installOk(user.client, {
      endpointId: endpoint.id,
      planId: "trace-debug-starter",
      disabledRpcMethodsOnCreation: ["trace_block"],
    });
    expect(installed).toMatchObject({
      interval: "MONTHLY",
      endpointId: endpoint.id,
      plan: { id: "trace-debug-starter", price: 0 },
      addon: { slug: "trace-debug", isInstalled: true },
      disabledRpcMethodsOnCreation: ["trace_block"],
    });
    expect(installed.installedRpcMethods.find((m) => m.name === "trace_block")?.isDisabled).toBe(true);

    const onEndpoint = await user.client.gqlOk<{
      endpoint: { installedAddons: { id: string }[] };
      activeAddons: { id: string; addonSlug: string; endpointsCount: number }[];
    }>(
      `query($id: ID!) { endpoint(id: $id) { installedAddons { id } } activeAddons { id addonSlug endpointsCount } }`,
      { id: endpoint.id },
    );
    expect(onEndpoint.endpoint.installedAddons.map((i) => i.id)).toEqual([installed.id]);
    const samples = await user.client.gqlOk<{
      installedAddons: { installedRpcMethods: { name: string; endpointUrl: string; sampleRequest: string }[] }[];
    }>(
      `query($e: ID!) { installedAddons(endpointId: $e) { installedRpcMethods { name endpointUrl sampleRequest } } }`,
      {
        e: endpoint.id,
      },
    );
    const sample = samples.installedAddons[0]?.installedRpcMethods.find((m) => m.name === "trace_block");
    expect(sample?.endpointUrl).toMatch(new RegExp(`/rpc/${endpoint.exId}$`));
    expect(JSON.parse(sample?.sampleRequest ?? "{}")).toEqual({
      jsonrpc: "2.0",
      id: 1,
      method: "trace_block",
      params: ["latest"],
    });
    expect(onEndpoint.activeAddons).toEqual([{ id: installed.id, addonSlug: "trace-debug", endpointsCount: 1 }]);

    const change = (current: string, next: string, interval = "MONTHLY") =>
      user.client.gql<{ changeAddonPlan: Installed }>(
        `mutation($i: ChangeAddonPlanInput!) { changeAddonPlan(input: $i) { ${installedFields} } }`,
        { i: { addonId: installed.id, currentPlanId: current, newPlanId: next, interval } },
      );
    const upgraded = (await change("trace-debug-starter", "trace-debug-pro")).data?.changeAddonPlan;
    expect(upgraded).toMatchObject({ plan: { id: "trace-debug-pro", price: 4900 }, isPendingDowngrade: false });
    expect(fieldError(await change("trace-debug-starter", "trace-debug-pro"))).toEqual({
      code: "BAD_USER_INPUT",
      pointers: ["/currentPlanId"],
    });
    expect(fieldError(await change("trace-debug-pro", "token-api-free"))).toEqual({
      code: "BAD_USER_INPUT",
      pointers: ["/newPlanId"],
    });
    const downgrading = (await change("trace-debug-pro", "trace-debug-starter")).data?.changeAddonPlan;
    expect(downgrading).toMatchObject({
      plan: { id: "trace-debug-pro" },
      pendingPlan: { id: "trace-debug-starter" },
      isPendingDowngrade: true,
    });
    const kept = await user.client.gqlOk<{ cancelDeactivation: Installed }>(
      `mutation($id: ID!) { cancelDeactivation(addonId: $id) { ${installedFields} } }`,
      { id: installed.id },
    );
    expect(kept.cancelDeactivation).toMatchObject({ isPendingDowngrade: false, pendingPlan: null });

    const remove = (immediately: boolean) =>
      user.client.gql<{ deleteAddon: Installed }>(
        `mutation($id: ID!, $r: String!, $now: Boolean) { deleteAddon(addonId: $id, cancelationReason: $r, immediately: $now) { ${installedFields} } }`,
        { id: installed.id, r: "Only needed it for one bug.", now: immediately },
      );
    const pending = (await remove(false)).data?.deleteAddon;
    expect(pending).toMatchObject({
      isPendingDeactivation: true,
      disableChanges: true,
      deactivatesAt: pending?.currentPeriodEnd,
    });
    expect((await change("trace-debug-pro", "trace-debug-starter")).errors?.[0]?.extensions?.code).toBe("CONFLICT");
    const cancelled = await user.client.gqlOk<{ cancelDeactivation: Installed }>(
      `mutation($id: ID!) { cancelDeactivation(addonId: $id) { ${installedFields} } }`,
      { id: installed.id },
    );
    expect(cancelled.cancelDeactivation).toMatchObject({ isPendingDeactivation: false, deactivatesAt: null });
    expect((await remove(true)).data?.deleteAddon.id).toBe(installed.id);
    const after = await user.client.gqlOk<{ endpoint: { installedAddons: unknown[] }; activeAddons: unknown[] }>(
      `query($id: ID!) { endpoint(id: $id) { installedAddons { id } } activeAddons { id } }`,
      { id: endpoint.id },
    );
    expect(after).toEqual({ endpoint: { installedAddons: [] }, activeAddons: [] });
    // Removed, it can be installed again.
    await installOk(user.client, { endpointId: endpoint.id, planId: "trace-debug-starter" });
  });

  it("the price of an install: the plan per interval, the coupon where it applies", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await newEndpoint(user.client);
    const yearly = await installOk(user.client, {
      endpointId: endpoint.id,
      planId: "trace-debug-pro",
      interval: "YEARLY",
      coupon: "builders20",
    });
    expect(yearly.price).toEqual({
      listPrice: 49000,
      discount: 9800,
      total: 39200,
      discountedIntervals: 1,
      couponCode: "BUILDERS20",
      interval: "YEARLY",
    });
    const quote = await user.client.gqlOk<{ addonPrice: { total: number; discount: number } }>(
      `{ addonPrice(planId: "nft-api-growth", coupon: "DATAKIT") { total discount } }`,
    );
    expect(quote.addonPrice).toEqual({ total: 2925, discount: 975 });
  });

  it("an account add-on, a bundle, its tracking and an install's event", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await newEndpoint(user.client);
    const account = await user.client.gqlOk<{
      installAccountAddon: { addonSlug: string; endpointId: string | null; planPrice: number };
    }>(`mutation { installAccountAddon(input: { planId: "tx-guard-team" }) { addonSlug endpointId planPrice } }`);
    expect(account.installAccountAddon).toEqual({ addonSlug: "tx-guard", endpointId: null, planPrice: 1900 });
    const again = await user.client.gql(`mutation { installAccountAddon(input: { planId: "tx-guard-team" }) { id } }`);
    expect(fieldError(again)).toEqual({ code: "CONFLICT", pointers: ["/planId"] });

    const bundle = await user.client.gqlOk<{ installBundle: Installed[] }>(
      `mutation($e: ID!) { installBundle(input: { bundleId: "data-kit", endpointId: $e }) { ${installedFields} } }`,
      { e: endpoint.id },
    );
    expect(bundle.installBundle.map((i) => [i.addon.slug, i.plan.id, i.price.couponCode, i.price.total])).toEqual([
      ["token-api", "token-api-growth", "DATAKIT", 2175],
      ["nft-api", "nft-api-growth", "DATAKIT", 2925],
    ]);
    const tracked = await user.client.gqlOk<{ trackBundle: { success: boolean } }>(
      `mutation { trackBundle(bundleId: "data-kit", event: "VIEWED") { success } }`,
    );
    expect(tracked.trackBundle.success).toBe(true);
    const sent = await user.client.gqlOk<{ sendEvent: { success: boolean } }>(
      `mutation($i: ID!, $e: ID!) { sendEvent(installId: $i, endpointId: $e) { success } }`,
      { i: bundle.installBundle[0]?.id, e: endpoint.id },
    );
    expect(sent.sendEvent.success).toBe(true);
    // A bundle with an add-on already there installs nothing.
    const before = await installCount(user.viewer.id);
    const twice = await user.client.gql(
      `mutation($e: ID!) { installBundle(input: { bundleId: "data-kit", endpointId: $e }) { id } }`,
      {
        e: endpoint.id,
      },
    );
    expect(twice.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    expect(await installCount(user.viewer.id)).toBe(before);
  });

  it("bad input is named by its field and writes nothing; another account's endpoint is not found", async () => {
    const user = await signUp(ctx.app);
    const other = await signUp(ctx.app);
    const endpoint = await newEndpoint(user.client);
    const theirs = await newEndpoint(other.client);
    const solana = await newEndpoint(user.client, "solana-devnet").catch(() => null);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ endpointId: endpoint.id, planId: "no-such-plan" }, "BAD_USER_INPUT", "/planId"],
      [{ endpointId: endpoint.id, planId: "trace-debug-pro", coupon: "NOPE99" }, "BAD_USER_INPUT", "/coupon"],
      [{ endpointId: endpoint.id, planId: "trace-debug-pro", coupon: "LAUNCH2025" }, "BAD_USER_INPUT", "/coupon"],
      [{ endpointId: endpoint.id, planId: "token-api-free", coupon: "TRACE10" }, "BAD_USER_INPUT", "/coupon"],
      [{ endpointId: endpoint.id, planId: "archive-standard" }, "BAD_USER_INPUT", "/planId"],
      [{ endpointId: endpoint.id, planId: "tx-guard-team" }, "BAD_USER_INPUT", "/planId"],
      [
        { endpointId: endpoint.id, planId: "trace-debug-pro", disabledRpcMethodsOnCreation: ["eth_call"] },
        "BAD_USER_INPUT",
        "/disabledRpcMethodsOnCreation/0",
      ],
      [{ endpointId: endpoint.id, planId: "trace-debug-pro", interval: "WEEKLY" }, "BAD_USER_INPUT", ""],
    ];
    for (const [input, code, pointer] of cases) {
      const result = await install(user.client, input);
      expect(result.errors?.[0]?.extensions?.code, JSON.stringify(input)).toBe(code);
      if (pointer) expect(fieldError(result).pointers, JSON.stringify(input)).toEqual([pointer]);
    }
    const notFound = await install(user.client, { endpointId: theirs.id, planId: "trace-debug-pro" });
    expect(notFound.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    if (solana) {
      const wrongNetwork = await install(user.client, { endpointId: solana.id, planId: "trace-debug-pro" });
      expect(fieldError(wrongNetwork)).toEqual({ code: "BAD_USER_INPUT", pointers: ["/endpointId"] });
    }
    expect(await installCount(user.viewer.id)).toBe(0);

    await installOk(user.client, { endpointId: endpoint.id, planId: "trace-debug-starter" });
    const second = await install(user.client, { endpointId: endpoint.id, planId: "trace-debug-pro" });
    expect(fieldError(second)).toEqual({ code: "CONFLICT", pointers: ["/endpointId"] });
    expect(await installCount(user.viewer.id)).toBe(1);

    const missingReason = await user.client.gql(
      `mutation($id: ID!) { deleteAddon(addonId: $id, cancelationReason: "") { id } }`,
      {
        id: (await user.client.gqlOk<{ activeAddons: { id: string }[] }>(`{ activeAddons { id } }`)).activeAddons[0]
          ?.id,
      },
    );
    expect(fieldError(missingReason)).toEqual({ code: "BAD_USER_INPUT", pointers: ["/cancelationReason"] });
    // The other account sees none of it.
    const seen = await other.client.gqlOk<{ activeAddons: unknown[] }>(`{ activeAddons { id } }`);
    expect(seen.activeAddons).toEqual([]);
    const theirView = await other.client.gql(`query($e: ID!) { installedAddons(endpointId: $e) { id } }`, {
      e: endpoint.id,
    });
    expect(theirView.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
});
