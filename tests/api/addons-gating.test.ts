// An add-on's methods at the proxy: refused naming the add-on on an endpoint without it, answered by the
// node once it is installed, refused again once removed. In force in the process that answered the
// mutation before it answers (the next call sees it), and in another service process of the same
// deployment (a separate OS process on the same database) as soon as the events relay carries it, the
// way a pause reaches every proxy (tests/api/changes-in-force.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnvilNode } from "../../server/dataplane/chain/anvil.ts";
import { settleDueInstalls } from "../../server/domains/addons/service.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { type AnvilUpstream, startAnvilUpstream } from "../support/anvil-upstream.ts";
import { type GqlClient, signUp, startTestApp, type TestApp } from "../support/api.ts";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";

let node: AnvilNode;
let app: TestApp;
let other: ServiceProcess;
let upstream: AnvilUpstream;
let txHash: string;

async function nodeCall(method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(node.httpUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(JSON.stringify(body.error));
  return body.result;
}

beforeAll(async () => {
  upstream = await startAnvilUpstream();
  node = upstream.node;
  app = await startTestApp();
  other = await startServiceProcess({ DATABASE_URL: app.database.url, NODEPLANE_ROLES: "proxy" });
  // A transaction to trace, sent to the node itself (the proxy serves no signing with the node's keys).
  const [from] = (await nodeCall("eth_accounts", [])) as string[];
  txHash = (await nodeCall("eth_sendTransaction", [
    { from, to: "0x000000000000000000000000000000000000dEaD", value: "0x1" },
  ])) as string;
}, 180_000);

afterAll(async () => {
  await other?.stop();
  await app?.close();
  await upstream?.close();
});

interface Endpoint {
  id: string;
  exId: string;
  initialToken: string;
}

interface Answer {
  result?: { from?: string; to?: string; type?: string };
  error?: { code: number; message: string; data?: { addon?: string } };
}

async function newEndpoint(client: GqlClient): Promise<Endpoint> {
  const data = await client.gqlOk<{ createEndpoint: Endpoint }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id exId initialToken } }`,
  );
  return data.createEndpoint;
}

/** One call; a refusal of the request's only call by a rate limit is an HTTP 429, any other answer a 200. */
async function rpc(base: string, endpoint: Endpoint, method: string, params: unknown[]): Promise<Answer> {
  const res = await fetch(`${base}/rpc/${endpoint.exId}/${endpoint.initialToken}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const answer = (await res.json()) as Answer;
  expect(res.status).toBe(answer.error?.code === -32029 ? 429 : 200);
  return answer;
}

const trace = (base: string, endpoint: Endpoint) =>
  rpc(base, endpoint, "debug_traceTransaction", [txHash, { tracer: "callTracer" }]);

/** What a traced answer is: the call tree of the transaction sent in beforeAll. */
const traced = (answer: Answer) => answer.result?.to?.toLowerCase() === "0x000000000000000000000000000000000000dead";
const refusedNaming = (answer: Answer, addon: string) =>
  answer.error?.code === -32009 && answer.error.message.includes(addon) && answer.error.data?.addon === addon;

/** Calls the other process until `ok` holds of its answer; 2 s bounds "as soon as the relay carries it". */
async function untilOther(endpoint: Endpoint, ok: (answer: Answer) => boolean): Promise<void> {
  const deadline = performance.now() + 2000;
  for (;;) {
    const answer = await trace(other.url, endpoint);
    if (ok(answer)) return;
    if (performance.now() > deadline) throw new Error(`the other process still answers ${JSON.stringify(answer)}`);
  }
}

describe("add-on methods at the proxy", () => {
  it("debug_traceTransaction: refused naming Trace & Debug, answered once installed, refused once removed, in both processes", async () => {
    const user = await signUp(app);
    const endpoint = await newEndpoint(user.client);
    const bare = await newEndpoint(user.client);

    const before = await trace(app.url, endpoint);
    expect(refusedNaming(before, "Trace & Debug"), JSON.stringify(before)).toBe(true);
    // A method of the namespace the catalogue does not list is the add-on's too.
    expect(refusedNaming(await rpc(app.url, endpoint, "trace_filter", [{}]), "Trace & Debug")).toBe(true);
    expect(refusedNaming(await rpc(app.url, endpoint, "qn_getWalletTokenBalance", [{}]), "Token API")).toBe(true);
    await untilOther(endpoint, (a) => refusedNaming(a, "Trace & Debug"));

    const { installAddon } = await user.client.gqlOk<{ installAddon: { id: string } }>(
      `mutation($e: ID!) { installAddon(input: { endpointId: $e, planId: "trace-debug-pro" }) { id } }`,
      { e: endpoint.id },
    );
    const served = await trace(app.url, endpoint);
    expect(traced(served), JSON.stringify(served)).toBe(true);
    await untilOther(endpoint, traced);
    // Another endpoint of the account has not got it.
    expect(refusedNaming(await trace(app.url, bare), "Trace & Debug")).toBe(true);
    // Other add-ons stay locked.
    expect(refusedNaming(await rpc(app.url, endpoint, "qn_fetchNFTs", [{}]), "NFT API")).toBe(true);

    // A method of the add-on turned off on the endpoint, then on again.
    const toggle = () =>
      user.client.gqlOk<{ toggleRpcMethod: { disabled: boolean } }>(
        `mutation($e: ID!) { toggleRpcMethod(endpointId: $e, methodId: "debug_traceTransaction") { disabled } }`,
        { e: endpoint.id },
      );
    expect((await toggle()).toggleRpcMethod.disabled).toBe(true);
    expect((await trace(app.url, endpoint)).error?.code).toBe(-32006);
    await untilOther(endpoint, (a) => a.error?.code === -32006);
    expect((await toggle()).toggleRpcMethod.disabled).toBe(false);
    expect(traced(await trace(app.url, endpoint))).toBe(true);

    // Removal at the period's end keeps it served until then; removal at once refuses the next call.
    await user.client.gqlOk(`mutation($id: ID!) { deleteAddon(addonId: $id, cancelationReason: "done") { id } }`, {
      id: installAddon.id,
    });
    expect(traced(await trace(app.url, endpoint))).toBe(true);
    await user.client.gqlOk(`mutation($id: ID!) { deactivateAddOnImmediately(accountAddOnId: $id) { id } }`, {
      id: installAddon.id,
    });
    expect(refusedNaming(await trace(app.url, endpoint), "Trace & Debug")).toBe(true);
    await untilOther(endpoint, (a) => refusedNaming(a, "Trace & Debug"));
  });

  it("in a batch, only the add-on's call is refused", async () => {
    const user = await signUp(app);
    const endpoint = await newEndpoint(user.client);
    const res = await fetch(`${app.url}/rpc/${endpoint.exId}/${endpoint.initialToken}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
        { jsonrpc: "2.0", id: 2, method: "trace_block", params: ["latest"] },
      ]),
    });
    const answers = (await res.json()) as (Answer & { id: number; result?: unknown })[];
    expect(answers.find((a) => a.id === 1)?.result).toBe("0xaa36a7");
    expect(refusedNaming(answers.find((a) => a.id === 2) as Answer, "Trace & Debug")).toBe(true);
  });

  it("an add-on's calls are counted per add-on with its credit multiplier, in usage and the endpoint's metrics", async () => {
    const user = await signUp(app);
    const endpoint = await newEndpoint(user.client);
    // Refused while not installed: counted as refused, not billed.
    expect(refusedNaming(await trace(app.url, endpoint), "Trace & Debug")).toBe(true);
    await user.client.gqlOk(
      `mutation($e: ID!) { installAddon(input: { endpointId: $e, planId: "trace-debug-pro" }) { id } }`,
      { e: endpoint.id },
    );
    for (let i = 0; i < 3; i++) expect(traced(await trace(app.url, endpoint))).toBe(true);
    await rpc(app.url, endpoint, "eth_chainId", []);
    type Counts = { addonSlug: string; requests: number; credits: number; refused: number }[];
    const deadline = performance.now() + 10_000;
    type Seen = { usage: { addonUsages: Counts }; endpointMetrics: { addonUsages: Counts } };
    let seen: Seen;
    for (;;) {
      seen = await user.client.gqlOk<Seen>(
        `query($e: ID!) { usage(pastDay: true) { addonUsages { addonSlug requests credits refused } }
          endpointMetrics(endpointId: $e, range: HOUR) { addonUsages { addonSlug requests credits refused } } }`,
        { e: endpoint.id },
      );
      if (seen.usage.addonUsages[0]?.requests === 3 && seen.endpointMetrics.addonUsages[0]?.refused === 1) break;
      if (performance.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Ethereum's base credit is 1; Trace & Debug's multiplier is 4 (schemas/catalogue/addons.json).
    const active = await user.client.gqlOk<{ activeAddons: { planMonthlyRequests: number }[] }>(
      "{ activeAddons { planMonthlyRequests } }",
    );
    expect(active.activeAddons).toEqual([{ planMonthlyRequests: 3 }]);
    expect(seen.usage.addonUsages).toEqual([{ addonSlug: "trace-debug", requests: 3, credits: 12, refused: 1 }]);
    expect(seen.endpointMetrics.addonUsages).toEqual([
      { addonSlug: "trace-debug", requests: 3, credits: 12, refused: 1 },
    ]);
  });

  it("the add-on plan's requests per second are enforced by the proxy's limiter, and its plan change takes effect at once", async () => {
    const user = await signUp(app);
    const endpoint = await newEndpoint(user.client);
    const { installAddon } = await user.client.gqlOk<{ installAddon: { id: string } }>(
      `mutation($e: ID!) { installAddon(input: { endpointId: $e, planId: "trace-debug-starter" }) { id } }`,
      { e: endpoint.id },
    );
    // The Starter plan allows 5 a second: of 8 at once, some are refused naming the add-on's plan.
    const answers = await Promise.all(Array.from({ length: 8 }, () => trace(app.url, endpoint)));
    const limited = answers.filter((a) => a.error?.code === -32029);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]?.error?.message).toContain("Trace & Debug");
    expect(answers.filter(traced).length).toBeLessThanOrEqual(5);
    // Other methods are not the add-on's limit.
    expect((await rpc(app.url, endpoint, "eth_chainId", [])).result).toBe("0xaa36a7");
    await user.client.gqlOk(`mutation($i: ChangeAddonPlanInput!) { changeAddonPlan(input: $i) { id } }`, {
      i: {
        addonId: installAddon.id,
        currentPlanId: "trace-debug-starter",
        newPlanId: "trace-debug-pro",
        interval: "MONTHLY",
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = await Promise.all(Array.from({ length: 8 }, () => trace(app.url, endpoint)));
    expect(after.filter(traced).length).toBe(8);
  });

  it("at the period's end a pending removal takes effect at the proxy and a pending downgrade applies", async () => {
    const user = await signUp(app);
    const endpoint = await newEndpoint(user.client);
    const other = await newEndpoint(user.client);
    const install = async (e: Endpoint) =>
      (
        await user.client.gqlOk<{ installAddon: { id: string } }>(
          `mutation($e: ID!) { installAddon(input: { endpointId: $e, planId: "trace-debug-pro" }) { id } }`,
          { e: e.id },
        )
      ).installAddon.id;
    const removed = await install(endpoint);
    const downgraded = await install(other);
    await user.client.gqlOk(`mutation($id: ID!) { deleteAddon(addonId: $id, cancelationReason: "done") { id } }`, {
      id: removed,
    });
    await user.client.gqlOk(`mutation($i: ChangeAddonPlanInput!) { changeAddonPlan(input: $i) { id } }`, {
      i: {
        addonId: downgraded,
        currentPlanId: "trace-debug-pro",
        newPlanId: "trace-debug-starter",
        interval: "MONTHLY",
      },
    });
    // Before the period's end nothing changes.
    const db = openDatabase(app.database.url, 2);
    try {
      await settleDueInstalls(db, app.services.events);
      expect(traced(await trace(app.url, endpoint))).toBe(true);
      // Forty days on, both periods have ended.
      await settleDueInstalls(db, app.services.events, new Date(Date.now() + 40 * 86_400_000));
    } finally {
      await db.$client.end();
    }
    expect(refusedNaming(await trace(app.url, endpoint), "Trace & Debug")).toBe(true);
    expect(traced(await trace(app.url, other))).toBe(true);
    const { installedAddons } = await user.client.gqlOk<{
      installedAddons: { plan: { id: string }; isPendingDowngrade: boolean }[];
    }>(`query($e: ID!) { installedAddons(endpointId: $e) { plan { id } isPendingDowngrade } }`, { e: other.id });
    expect(installedAddons).toEqual([{ plan: { id: "trace-debug-starter" }, isPendingDowngrade: false }]);
  });
});
