// Endpoint security end to end: /graphql (roles, tenancy, validation) and the service's own /rpc routes
// in front of a real anvil.
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilUpstream, startAnvilUpstream } from "../support/anvil-upstream.ts";
import { type GqlClient, signIn, signUp, startTestApp, type TestApp } from "../support/api.ts";

const DEMO_PASSWORD = "demo-password-for-tests";
let upstream: AnvilUpstream;
let app: TestApp;

beforeAll(async () => {
  upstream = await startAnvilUpstream();
  app = await startTestApp();
}, 120_000);

afterAll(async () => {
  await app?.close();
  await upstream?.close();
});

const securityFields = `options { tokens jwts referrers ips domainMasks requestFilters ipCustomHeader ipCustomHeaderName hsts cors enforceChainNetwork }
  tokens { id token type } jwts { id kid } referrers { id referrer } ips { id ip } domainMasks { id host } requestFilters { id method }`;

async function newEndpoint(client: GqlClient) {
  const data = await client.gqlOk<{ createEndpoint: { id: string; httpUrl: string; wssUrl: string } }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id httpUrl wssUrl } }`,
  );
  return data.createEndpoint;
}

async function rpc(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  });
  lastRpc = { status: res.status, body: await res.clone().json() };
  return { status: res.status, body: (await res.json()) as { result?: string; error?: { code: number } } };
}

let lastRpc: unknown = null;
const lastSeen = async () => lastRpc;

async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 3000;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`the change did not reach the proxy: ${JSON.stringify(await lastSeen())}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("security through GraphQL and the service's own proxy", () => {
  it("a new endpoint has one token and token auth on; tokens are shown once, then masked", async () => {
    const alice = await signUp(app);
    const endpoint = await newEndpoint(alice.client);
    const before = await alice.client.gqlOk<{
      security: { options: { tokens: boolean }; tokens: { token: string }[] };
    }>(`query($id: ID!) { security(id: $id) { ${securityFields} } }`, { id: endpoint.id });
    expect(before.security.options.tokens).toBe(true);
    expect(before.security.tokens).toHaveLength(1);
    expect((await rpc(endpoint.httpUrl)).status).toBe(401);

    const created = await alice.client.gqlOk<{ createAuthToken: { id: string; token: string } }>(
      `mutation($id: ID!) { createAuthToken(id: $id) { id token } }`,
      { id: endpoint.id },
    );
    expect(created.createAuthToken.token).toMatch(/^[0-9a-f]{64}$/);
    await eventually(async () => (await rpc(`${endpoint.httpUrl}/${created.createAuthToken.token}`)).status === 200);
    expect((await rpc(endpoint.httpUrl, { "x-token": created.createAuthToken.token })).body.result).toBe("0xaa36a7");

    const listed = await alice.client.gqlOk<{ endpoint: { security: { tokens: { id: string; token: string }[] } } }>(
      `query($id: ID!) { endpoint(id: $id) { security { tokens { id token } } } }`,
      { id: endpoint.id },
    );
    const again = listed.endpoint.security.tokens.find((t) => t.id === created.createAuthToken.id);
    expect(again?.token).not.toBe(created.createAuthToken.token);
    expect(again?.token.startsWith(created.createAuthToken.token.slice(0, 4))).toBe(true);

    await alice.client.gqlOk(`mutation($id: ID!, $t: ID!) { deleteAuthToken(id: $id, tokenId: $t) { success } }`, {
      id: endpoint.id,
      t: created.createAuthToken.id,
    });
    await eventually(async () => (await rpc(`${endpoint.httpUrl}/${created.createAuthToken.token}`)).status === 401);
  });

  it("inputs are validated by the entity schema and the service, naming the field", async () => {
    const alice = await signUp(app);
    const endpoint = await newEndpoint(alice.client);
    const bad = await alice.client.gql(`mutation($e: ID!) { createIp(endpointId: $e, ip: "not an ip") { id } }`, {
      e: endpoint.id,
    });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/ip" }] });
    const range = await alice.client.gql(`mutation($e: ID!) { createIp(endpointId: $e, ip: "10.0.0.0/99") { id } }`, {
      e: endpoint.id,
    });
    expect(range.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/ip" }] });
    const key = await alice.client.gql(
      `mutation($id: ID!) { createJwt(id: $id, name: "k", kid: "k1", publicKey: "-----BEGIN PUBLIC KEY-----\\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\\n-----END PUBLIC KEY-----") { id } }`,
      { id: endpoint.id },
    );
    expect(key.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/publicKey" }] });
  });

  it("options and method toggles take effect on the endpoint's URL", async () => {
    const alice = await signUp(app);
    const endpoint = await newEndpoint(alice.client);
    await alice.client.gqlOk(
      `mutation($id: ID!) { updateOption(id: $id, option: tokens, status: DISABLED) { tokens } }`,
      { id: endpoint.id },
    );
    await eventually(async () => (await rpc(endpoint.httpUrl)).status === 200);
    await alice.client.gqlOk(
      `mutation($e: ID!) { toggleRpcMethod(endpointId: $e, methodId: "eth_chainId") { disabled } }`,
      { e: endpoint.id },
    );
    await eventually(async () => (await rpc(endpoint.httpUrl)).body.error?.code === -32006);
    await alice.client.gqlOk(`mutation($id: ID!) { toggleEndpointPaused(id: $id) { status } }`, { id: endpoint.id });
    await eventually(async () => (await rpc(endpoint.httpUrl)).status === 423);
  });

  it("the first IP rule turns the allowlist on, at once, and every change is in the audit", async () => {
    const alice = await signUp(app);
    const created = await alice.client.gqlOk<{
      createEndpoint: { id: string; httpUrl: string; initialToken: string };
    }>(
      `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id httpUrl initialToken } }`,
    );
    const endpoint = created.createEndpoint;
    // The first token from creation's answer calls the endpoint as the success screen shows it.
    const url = `${endpoint.httpUrl}/${endpoint.initialToken}`;
    await eventually(async () => (await rpc(url)).status === 200);

    const addIp = (ip: string) =>
      alice.client.gqlOk<{ createIp: { id: string } }>(
        `mutation($e: ID!, $ip: String!) { createIp(endpointId: $e, ip: $ip) { id } }`,
        {
          e: endpoint.id,
          ip,
        },
      );
    const first = await addIp("10.0.0.0/8");
    const options = async () =>
      (
        await alice.client.gqlOk<{ security: { options: { ips: boolean; referrers: boolean; jwts: boolean } } }>(
          `query($id: ID!) { security(id: $id) { options { ips referrers jwts } } }`,
          { id: endpoint.id },
        )
      ).security.options;
    expect((await options()).ips).toBe(true);
    // In force when the mutation answers: this machine is not in 10.0.0.0/8.
    expect((await rpc(url)).status).toBe(403);
    await addIp("127.0.0.1");
    await eventually(async () => (await rpc(url)).status === 200);

    // Turned off by hand, a second rule leaves it off: only the first item turns a check on.
    await alice.client.gqlOk(`mutation($id: ID!) { updateOption(id: $id, option: ips, status: DISABLED) { ips } }`, {
      id: endpoint.id,
    });
    await addIp("192.168.0.0/16");
    expect((await options()).ips).toBe(false);

    await alice.client.gqlOk(
      `mutation($e: ID!) { createReferrer(endpointId: $e, referrer: "app.example.com") { id } }`,
      {
        e: endpoint.id,
      },
    );
    expect((await options()).referrers).toBe(true);
    await alice.client.gqlOk(`mutation($id: ID!) { deleteIp(id: $id) { success } }`, { id: first.createIp.id });

    const { security } = await alice.client.gqlOk<{
      security: { audit: { action: string; subject: string; detail: string | null; user: string; userRole: string }[] };
    }>(`query($id: ID!) { security(id: $id) { audit { action subject detail user userRole date } } }`, {
      id: endpoint.id,
    });
    expect(security.audit.map((a) => [a.action, a.subject, a.detail])).toEqual([
      ["REMOVE", "ips", "10.0.0.0/8"],
      ["TURN_ON", "referrers", "with its first item"],
      ["ADD", "referrers", "app.example.com"],
      ["ADD", "ips", "192.168.0.0/16"],
      ["TURN_OFF", "ips", null],
      ["ADD", "ips", "127.0.0.1"],
      ["TURN_ON", "ips", "with its first item"],
      ["ADD", "ips", "10.0.0.0/8"],
    ]);
    for (const entry of security.audit) expect(entry).toMatchObject({ user: alice.email, userRole: "OWNER" });
    // No token value is ever in the audit; a new token is named by its first characters.
    const token = await alice.client.gqlOk<{ createAuthToken: { token: string } }>(
      `mutation($id: ID!) { createAuthToken(id: $id) { token } }`,
      { id: endpoint.id },
    );
    const after = await alice.client.gqlOk<{ security: { audit: { detail: string | null }[] } }>(
      `query($id: ID!) { security(id: $id) { audit { detail } } }`,
      { id: endpoint.id },
    );
    expect(after.security.audit[0].detail).toBe(`${token.createAuthToken.token.slice(0, 4)}${"•".repeat(8)}`);
    expect(JSON.stringify(after)).not.toContain(token.createAuthToken.token);
    expect(JSON.stringify(after)).not.toContain(endpoint.initialToken);
  });

  it("the first JWT key turns JWT authentication on", async () => {
    const alice = await signUp(app);
    const endpoint = await newEndpoint(alice.client);
    const { publicKey } = generateKeyPairSync("ed25519");
    const pem = publicKey.export({ type: "spki", format: "pem" }).toString();
    await alice.client.gqlOk(
      `mutation($id: ID!, $pem: String!) { createJwt(id: $id, name: "backend", kid: "k1", publicKey: $pem) { id } }`,
      { id: endpoint.id, pem },
    );
    const { security } = await alice.client.gqlOk<{
      security: { options: { jwts: boolean }; audit: { action: string; subject: string }[] };
    }>(`query($id: ID!) { security(id: $id) { options { jwts } audit { action subject } } }`, { id: endpoint.id });
    expect(security.options.jwts).toBe(true);
    expect(security.audit.slice(0, 2)).toEqual([
      { action: "TURN_ON", subject: "jwts" },
      { action: "ADD", subject: "jwts" },
    ]);
  });

  it("the catalogue says which networks this installation serves", async () => {
    const alice = await signUp(app);
    const { chains } = await alice.client.gqlOk<{ chains: { networks: { value: string; served: boolean }[] }[] }>(
      "{ chains { networks { value served } } }",
    );
    const served = chains.flatMap((chain) => chain.networks).filter((network) => network.served);
    expect(served.map((network) => network.value)).toEqual(["ethereum-sepolia"]);
  });

  it("another account gets NOT_FOUND; a VIEWER reads but changes nothing", async () => {
    const alice = await signUp(app);
    const bob = await signUp(app);
    const endpoint = await newEndpoint(alice.client);
    const referrer = await alice.client.gqlOk<{ createReferrer: { id: string } }>(
      `mutation($e: ID!) { createReferrer(endpointId: $e, referrer: "app.example.com") { id } }`,
      { e: endpoint.id },
    );
    const byBob = [
      await bob.client.gql(`query($id: ID!) { security(id: $id) { options { tokens } } }`, { id: endpoint.id }),
      await bob.client.gql(`mutation($id: ID!) { createAuthToken(id: $id) { id } }`, { id: endpoint.id }),
      await bob.client.gql(`mutation($id: ID!) { updateOption(id: $id, option: ips, status: ENABLED) { ips } }`, {
        id: endpoint.id,
      }),
      await bob.client.gql(`mutation($id: ID!) { deleteReferrer(id: $id) { success } }`, {
        id: referrer.createReferrer.id,
      }),
      await bob.client.gql(`mutation($e: ID!) { toggleRpcMethod(endpointId: $e, methodId: "eth_call") { disabled } }`, {
        e: endpoint.id,
      }),
    ];
    for (const r of byBob) expect(r.errors?.[0].extensions?.code).toBe("NOT_FOUND");

    const owner = await signIn(app, "demo@nodeplane.local", DEMO_PASSWORD);
    const viewer = await signIn(app, "viewer@nodeplane.local", DEMO_PASSWORD);
    const demo = await newEndpoint(owner.client);
    const read = await viewer.client.gql(`query($id: ID!) { security(id: $id) { ${securityFields} } }`, {
      id: demo.id,
    });
    expect(read.errors).toBeUndefined();
    const refused = [
      await viewer.client.gql(`mutation($id: ID!) { createAuthToken(id: $id) { id } }`, { id: demo.id }),
      await viewer.client.gql(`mutation($id: ID!) { updateOption(id: $id, option: cors, status: ENABLED) { cors } }`, {
        id: demo.id,
      }),
      await viewer.client.gql(`mutation($e: ID!) { createIp(endpointId: $e, ip: "10.0.0.1") { id } }`, { e: demo.id }),
    ];
    for (const r of refused) expect(r.errors?.[0].extensions?.code).toBe("FORBIDDEN");
  });
});

describe("domain masks in production without PUBLIC_URL", () => {
  it("are refused: the console answers at any host, and the Host a mutation names is its caller's to write", async () => {
    const production = await startTestApp({ NODE_ENV: "production", NODEPLANE_ALLOWED_HOSTS: "localhost" });
    try {
      const owner = await signUp(production);
      const endpoint = await newEndpoint(owner.client);
      const created = await owner.client.gql(
        "mutation($e: ID!, $h: String!) { createDomainMask(endpointId: $e, host: $h) { id } }",
        { e: endpoint.id, h: "console.example.test" },
      );
      expect(created.errors?.[0]).toMatchObject({
        message: "Domain masks need the service's PUBLIC_URL: without it every host name may be the console's own.",
        extensions: { code: "CONFLICT" },
      });
      const masks = await owner.client.gqlOk<{ security: { domainMasks: unknown[] } }>(
        "query($e: ID!) { security(id: $e) { domainMasks { id } } }",
        { e: endpoint.id },
      );
      expect(masks.security.domainMasks).toEqual([]);
    } finally {
      await production.close();
    }
  }, 120_000);
});
