// A change made in the console is in force at the proxy when the mutation answers: in the process that
// answered it at once (no wait between the answer and the next call); another process of the same
// deployment (one database, the events relay) converges to it. How soon it does is a benchmark's
// figure (`npm run bench -- inforce`), not an assertion here.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilUpstream, startAnvilUpstream } from "../support/anvil-upstream.ts";
import { type GqlClient, signUp, startTestApp, type TestApp } from "../support/api.ts";

const ROUNDS = 20;
let upstream: AnvilUpstream;
let first: TestApp;
let second: TestApp;

beforeAll(async () => {
  upstream = await startAnvilUpstream();
  first = await startTestApp();
  second = await startTestApp({}, { database: first.database });
}, 120_000);

afterAll(async () => {
  await second?.close();
  await first?.close();
  await upstream?.close();
});

interface Endpoint {
  id: string;
  exId: string;
  initialToken: string;
}

async function newEndpoint(client: GqlClient): Promise<Endpoint> {
  const data = await client.gqlOk<{ createEndpoint: Endpoint }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id exId initialToken } }`,
  );
  return data.createEndpoint;
}

/**
 * An endpoint on an account whose plan allows far more requests per second than the rounds send, so only
 * the changes under test refuse calls. The rate-limit stage reads the plan's rate again when the endpoint's
 * limits change: a limiter created and deleted.
 */
async function endpointWithoutPlanLimit(user: { client: GqlClient; viewer: { id: string } }): Promise<Endpoint> {
  const endpoint = await newEndpoint(user.client);
  const db = new pg.Client({ connectionString: first.database.url });
  await db.connect();
  await db.query("update subscriptions set requests_per_second = 100000 where account_id = $1", [user.viewer.id]);
  await db.end();
  const limiter = await user.client.gqlOk<{ createRateLimiter: { id: string } }>(
    `mutation($e: ID!) { createRateLimiter(endpointId: $e, interval: MINUTE, rate: 100000, methods: ["eth_chainId"], reason: "r", limitByIP: false) { id } }`,
    { e: endpoint.id },
  );
  await user.client.gqlOk(
    `mutation($e: ID!, $l: ID!) { deleteRateLimiter(endpointId: $e, rateLimiterId: $l) { success } }`,
    { e: endpoint.id, l: limiter.createRateLimiter.id },
  );
  return endpoint;
}

/** One eth_chainId through an app's own proxy; the HTTP status (200: served). */
async function rpc(app: TestApp, endpoint: Endpoint, token = endpoint.initialToken): Promise<number> {
  const res = await fetch(`${app.url}/rpc/${endpoint.exId}/${token}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  });
  const body = (await res.json()) as { result?: string };
  if (res.status === 200) expect(body.result).toBe("0xaa36a7");
  return res.status;
}

/** Calls the other process's proxy until it answers `status`; 2 s is the bound of "eventually". */
async function untilAnswers(app: TestApp, endpoint: Endpoint, status: number, token?: string): Promise<void> {
  const deadline = performance.now() + 2000;
  for (;;) {
    const got = await rpc(app, endpoint, token);
    if (got === status) return;
    if (performance.now() > deadline) throw new Error(`the other process still answers ${got}, not ${status}`);
  }
}

describe("a change is in force at the proxy when the mutation answers", () => {
  it("pause and resume, token revocation, IP allow entries, security options and rate limiters: the next call sees them", async () => {
    const user = await signUp(first);
    const endpoint = await endpointWithoutPlanLimit(user);
    const gql = (query: string, variables: Record<string, unknown>) => user.client.gqlOk(query, variables);
    expect(await rpc(first, endpoint)).toBe(200);

    const pause = `mutation($id: ID!) { toggleEndpointPaused(id: $id) { status } }`;
    for (let i = 0; i < ROUNDS; i++) {
      await gql(pause, { id: endpoint.id });
      expect(await rpc(first, endpoint)).toBe(423);
      await gql(pause, { id: endpoint.id });
      expect(await rpc(first, endpoint)).toBe(200);
    }

    for (let i = 0; i < ROUNDS; i++) {
      const created = await user.client.gqlOk<{ createAuthToken: { id: string; token: string } }>(
        `mutation($id: ID!) { createAuthToken(id: $id) { id token } }`,
        { id: endpoint.id },
      );
      expect(await rpc(first, endpoint, created.createAuthToken.token)).toBe(200);
      await gql(`mutation($id: ID!, $t: ID!) { deleteAuthToken(id: $id, tokenId: $t) { success } }`, {
        id: endpoint.id,
        t: created.createAuthToken.id,
      });
      expect(await rpc(first, endpoint, created.createAuthToken.token)).toBe(401);
    }

    // The allow list names another address: turning the option on refuses this client, off serves it.
    await gql(`mutation($e: ID!) { createIp(endpointId: $e, ip: "10.9.9.9") { id } }`, { e: endpoint.id });
    const ips = (status: string) =>
      gql(`mutation($id: ID!, $s: SecurityOptionStatus!) { updateOption(id: $id, option: ips, status: $s) { ips } }`, {
        id: endpoint.id,
        s: status,
      });
    for (let i = 0; i < ROUNDS; i++) {
      await ips("ENABLED");
      expect(await rpc(first, endpoint)).toBe(403);
      // An allow entry for this client serves it; without the entry it is refused again.
      const entry = await user.client.gqlOk<{ createIp: { id: string } }>(
        `mutation($e: ID!) { createIp(endpointId: $e, ip: "127.0.0.1") { id } }`,
        { e: endpoint.id },
      );
      expect(await rpc(first, endpoint)).toBe(200);
      await gql(`mutation($id: ID!) { deleteIp(id: $id) { success } }`, { id: entry.createIp.id });
      expect(await rpc(first, endpoint)).toBe(403);
      await ips("DISABLED");
      expect(await rpc(first, endpoint)).toBe(200);
    }

    for (let i = 0; i < 5; i++) {
      const limiter = await user.client.gqlOk<{ createRateLimiter: { id: string } }>(
        `mutation($e: ID!) { createRateLimiter(endpointId: $e, interval: MINUTE, rate: 1, methods: ["eth_chainId"], reason: "r", limitByIP: false) { id } }`,
        { e: endpoint.id },
      );
      const answers = [await rpc(first, endpoint), await rpc(first, endpoint)];
      expect(answers).toContain(429);
      await gql(`mutation($e: ID!, $l: ID!) { deleteRateLimiter(endpointId: $e, rateLimiterId: $l) { success } }`, {
        e: endpoint.id,
        l: limiter.createRateLimiter.id,
      });
      expect(await rpc(first, endpoint)).toBe(200);
    }

    await gql(`mutation($id: ID!) { archiveEndpoint(id: $id) { status } }`, { id: endpoint.id });
    expect(await rpc(first, endpoint)).toBe(410);
  });

  it("another process of the deployment converges to each pause, resume and token revocation", async () => {
    const user = await signUp(first);
    const endpoint = await endpointWithoutPlanLimit(user);
    const gql = (query: string, variables: Record<string, unknown>) => user.client.gqlOk(query, variables);
    await untilAnswers(second, endpoint, 200);

    const pause = `mutation($id: ID!) { toggleEndpointPaused(id: $id) { status } }`;
    for (let i = 0; i < 10; i++) {
      await gql(pause, { id: endpoint.id });
      await untilAnswers(second, endpoint, 423);
      await gql(pause, { id: endpoint.id });
      await untilAnswers(second, endpoint, 200);
    }
    for (let i = 0; i < 5; i++) {
      const created = await user.client.gqlOk<{ createAuthToken: { id: string; token: string } }>(
        `mutation($id: ID!) { createAuthToken(id: $id) { id token } }`,
        { id: endpoint.id },
      );
      await untilAnswers(second, endpoint, 200, created.createAuthToken.token);
      await gql(`mutation($id: ID!, $t: ID!) { deleteAuthToken(id: $id, tokenId: $t) { success } }`, {
        id: endpoint.id,
        t: created.createAuthToken.id,
      });
      await untilAnswers(second, endpoint, 401, created.createAuthToken.token);
    }
  });
});
