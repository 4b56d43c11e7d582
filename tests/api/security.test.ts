import { eq } from "drizzle-orm";
import Fastify, { type FastifyInstance } from "fastify";
import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { registerDataPlane } from "../../server/dataplane/proxy/register.ts";
import { SyncedEndpointDirectory } from "../../server/dataplane/proxy/synced-directory.ts";
import { accounts } from "../../server/domains/account/tables.ts";
import { endpoints } from "../../server/domains/endpoints/tables.ts";
import { databaseEndpointRecords } from "../../server/domains/security/endpoint-records.ts";
import * as security from "../../server/domains/security/service.ts";
import * as securityTables from "../../server/domains/security/tables.ts";
import * as schema from "../../server/domains/tables.ts";
import { type Db, openDatabase, runMigrations } from "../../server/platform/db/index.ts";
import { AppError } from "../../server/platform/errors.ts";
import { DomainEvents } from "../../server/platform/events.ts";
import { relayEvents } from "../../server/platform/events-relay.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

// The security service on a real PostgreSQL, and its effect on real traffic: the PostgreSQL-backed
// endpoint directory feeding the proxy in front of a real anvil.

let database: TestDatabase;
let db: Db;
let node: AnvilNode;
let app: FastifyInstance;
let directory: SyncedEndpointDirectory;
let url: string;
const events = new DomainEvents();
/** The account's owner acting, as the resolvers pass the signed-in member. */
const as = (accountId: string): security.Actor => ({ accountId, userId: null, role: "OWNER" });
let alice: string;
let bob: string;
let endpointId: string;
const exId = "sec0123456789abcdef0123";

beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url);
  await runMigrations(db);
  // Until the migrations include the security tables, create them from their Drizzle definitions
  // (a no-op once they are): the DDL is drizzle-kit's diff between the schema with and without them.
  const { generateDrizzleJson, generateMigration } = await import("drizzle-kit/api");
  const without = Object.fromEntries(Object.entries(schema).filter(([name]) => !(name in securityTables)));
  const ddl = await generateMigration(
    generateDrizzleJson(without),
    generateDrizzleJson({ ...without, ...securityTables }),
  );
  const existing = await db.$client.query("select to_regclass('public.endpoint_tokens') as t");
  if (!existing.rows[0].t) for (const statement of ddl) await db.$client.query(statement);
  [{ id: alice }, { id: bob }] = await db.insert(accounts).values([{}, {}]).returning({ id: accounts.id });
  [{ id: endpointId }] = await db
    .insert(endpoints)
    .values({ accountId: alice, exId, name: "calm-river-1000", chain: "ethereum", network: "ethereum-sepolia" })
    .returning({ id: endpoints.id });
  node = await startAnvil({ chainId: 11155111 });
  directory = new SyncedEndpointDirectory(databaseEndpointRecords(db), events);
  await directory.start();
  app = Fastify();
  registerDataPlane(app, {
    directory,
    upstreams: staticUpstreams([
      { network: "ethereum-sepolia", chainId: 11155111, httpUrl: node.httpUrl, wsUrl: node.wsUrl, source: "local" },
    ]),
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await directory?.close();
  await node?.stop();
  await db?.$client.end();
  await database?.drop();
});

async function chainId(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  });
  return { status: res.status, body: (await res.json()) as { result?: string; error?: { code: number } } };
}

/** The change reaches the proxy through the domain event; wait for it to apply. */
async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 3000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("the change did not reach the proxy");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "none";
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

describe("tokens", () => {
  let first: string;

  it("a new endpoint's first token turns token auth on; the token works at once", async () => {
    first = await db.transaction((tx) => security.createInitialToken(tx, alice, endpointId));
    events.emit("endpoint.changed", { accountId: alice, endpointId });
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    await eventually(async () => (await chainId(`/rpc/${exId}`)).status === 401);
    expect((await chainId(`/rpc/${exId}/${first}`)).status).toBe(200);
    expect((await chainId(`/rpc/${exId}`, { "x-token": first })).body.result).toBe("0xaa36a7");
  });

  it("stores only a hash and lists tokens masked", async () => {
    const rows = await db.select().from(securityTables.endpointTokens);
    expect(JSON.stringify(rows)).not.toContain(first);
    const view = await security.securityOf(db, alice, endpointId);
    expect(view.options.tokens).toBe(true);
    expect(view.tokens).toHaveLength(1);
    expect(view.tokens[0].token.startsWith(first.slice(0, 4))).toBe(true);
    expect(view.tokens[0].token).not.toContain(first.slice(4, 12));
  });

  it("several tokens work; a deleted one is refused at once", async () => {
    const second = await security.createToken(db, events, as(alice), endpointId);
    await eventually(async () => (await chainId(`/rpc/${exId}/${second.token}`)).status === 200);
    const listed = await security.securityOf(db, alice, endpointId);
    const firstId = listed.tokens.find((t) => t.token.startsWith(first.slice(0, 4)) && t.id !== second.id)
      ?.id as string;
    await security.deleteToken(db, events, as(alice), endpointId, firstId);
    await eventually(async () => (await chainId(`/rpc/${exId}/${first}`)).status === 401);
    expect((await chainId(`/rpc/${exId}/${second.token}`)).status).toBe(200);
    first = second.token;
  });

  it("another account cannot see or change them", async () => {
    const listed = await security.securityOf(db, alice, endpointId);
    expect(await codeOf(security.securityOf(db, bob, endpointId))).toBe("NOT_FOUND");
    expect(await codeOf(security.createToken(db, events, as(bob), endpointId))).toBe("NOT_FOUND");
    expect(await codeOf(security.deleteToken(db, events, as(bob), endpointId, listed.tokens[0].id))).toBe("NOT_FOUND");
    expect(await codeOf(security.updateOption(db, events, as(bob), endpointId, "tokens", false))).toBe("NOT_FOUND");
    expect((await security.securityOf(db, alice, endpointId)).tokens).toHaveLength(1);
  });

  it("turning the option off opens the endpoint", async () => {
    await security.updateOption(db, events, as(alice), endpointId, "tokens", false);
    await eventually(async () => (await chainId(`/rpc/${exId}`)).status === 200);
    await security.updateOption(db, events, as(alice), endpointId, "tokens", true);
    await eventually(async () => (await chainId(`/rpc/${exId}`)).status === 401);
  });
});

describe("lists and options", () => {
  const withToken = () => `/rpc/${exId}`;
  let token: string;
  beforeAll(async () => {
    await security.updateOption(db, events, as(alice), endpointId, "tokens", false);
    token = (await security.createToken(db, events, as(alice), endpointId)).token;
    expect(token).toBeTruthy();
  });

  it("IP rules: validated, enforced when on, and not another account's to delete", async () => {
    expect(await codeOf(security.createEntry(db, events, as(alice), endpointId, "IP", "300.1.1.1"))).toBe(
      "BAD_USER_INPUT",
    );
    const rule = await security.createEntry(db, events, as(alice), endpointId, "IP", "10.0.0.0/8");
    await security.updateOption(db, events, as(alice), endpointId, "ips", true);
    await eventually(async () => (await chainId(withToken())).status === 403);
    const local = await security.createEntry(db, events, as(alice), endpointId, "IP", "127.0.0.1");
    await eventually(async () => (await chainId(withToken())).status === 200);
    expect(await codeOf(security.deleteEntry(db, events, as(bob), "IP", local.id))).toBe("NOT_FOUND");
    await security.deleteEntry(db, events, as(alice), "IP", local.id);
    await eventually(async () => (await chainId(withToken())).status === 403);
    await security.updateOption(db, events, as(alice), endpointId, "ips", false);
    await eventually(async () => (await chainId(withToken())).status === 200);
    await security.deleteEntry(db, events, as(alice), "IP", rule.id);
  });

  it("referrers: normalised, enforced when on", async () => {
    const r = await security.createEntry(db, events, as(alice), endpointId, "REFERRER", "https://App.Example.com/path");
    expect(r.value).toBe("app.example.com");
    await security.updateOption(db, events, as(alice), endpointId, "referrers", true);
    await eventually(async () => (await chainId(withToken())).status === 403);
    expect((await chainId(withToken(), { origin: "https://app.example.com" })).status).toBe(200);
    await security.updateOption(db, events, as(alice), endpointId, "referrers", false);
    await eventually(async () => (await chainId(withToken())).status === 200);
  });

  it("domain masks: a host belongs to one endpoint overall", async () => {
    await security.createEntry(db, events, as(alice), endpointId, "DOMAIN_MASK", "RPC.Alice.test");
    expect(await codeOf(security.createEntry(db, events, as(alice), endpointId, "DOMAIN_MASK", "rpc.alice.test"))).toBe(
      "CONFLICT",
    );
    const [{ id: bobEndpoint }] = await db
      .insert(endpoints)
      .values({
        accountId: bob,
        exId: "bob0123456789abcdef",
        name: "icy-peak-2000",
        chain: "ethereum",
        network: "ethereum-sepolia",
      })
      .returning({ id: endpoints.id });
    expect(await codeOf(security.createEntry(db, events, as(bob), bobEndpoint, "DOMAIN_MASK", "rpc.alice.test"))).toBe(
      "CONFLICT",
    );
    expect(
      await codeOf(
        security.createEntry(db, events, as(alice), endpointId, "DOMAIN_MASK", "console.test", ["console.test"]),
      ),
    ).toBe("BAD_USER_INPUT");
  });

  it("request filters and method toggles reach the proxy", async () => {
    expect(
      await codeOf(security.createEntry(db, events, as(alice), endpointId, "REQUEST_FILTER", "eth_notAThing")),
    ).toBe("BAD_USER_INPUT");
    await security.createEntry(db, events, as(alice), endpointId, "REQUEST_FILTER", "eth_blockNumber");
    await security.updateOption(db, events, as(alice), endpointId, "requestFilters", true);
    await eventually(async () => (await chainId(withToken())).body.error?.code === -32005);
    await security.updateOption(db, events, as(alice), endpointId, "requestFilters", false);
    const toggled = await security.toggleRpcMethod(db, events, as(alice), endpointId, "eth_chainId");
    expect(toggled.disabled).toBe(true);
    await eventually(async () => (await chainId(withToken())).body.error?.code === -32006);
    expect((await security.rpcMethods(db, alice, endpointId)).find((m) => m.name === "eth_chainId")?.disabled).toBe(
      true,
    );
    expect(await codeOf(security.toggleRpcMethod(db, events, as(bob), endpointId, "eth_chainId"))).toBe("NOT_FOUND");
    expect((await security.toggleRpcMethod(db, events, as(alice), endpointId, "eth_chainId")).disabled).toBe(false);
    await eventually(
      async () =>
        (await chainId(withToken())).status === 200 && (await chainId(withToken())).body.result === "0xaa36a7",
    );
  });

  it("JWT keys: checked on upload, verified by kid on requests", async () => {
    expect(
      await codeOf(
        security.createJwt(db, events, as(alice), endpointId, {
          name: "bad",
          kid: "k",
          publicKey: "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----",
        }),
      ),
    ).toBe("BAD_USER_INPUT");
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    const jwt = await security.createJwt(db, events, as(alice), endpointId, {
      name: "backend",
      kid: "rsa-1",
      publicKey: await exportSPKI(publicKey),
    });
    expect(jwt.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(
      await codeOf(
        security.createJwt(db, events, as(alice), endpointId, {
          name: "again",
          kid: "rsa-1",
          publicKey: await exportSPKI(publicKey),
        }),
      ),
    ).toBe("CONFLICT");
    await security.updateOption(db, events, as(alice), endpointId, "jwts", true);
    await eventually(async () => (await chainId(withToken())).status === 401);
    const signed = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "rsa-1" })
      .setExpirationTime("5m")
      .sign(privateKey);
    expect((await chainId(withToken(), { authorization: `Bearer ${signed}` })).status).toBe(200);
    await security.deleteJwt(db, events, as(alice), endpointId, jwt.id);
    await eventually(async () => (await chainId(withToken(), { authorization: `Bearer ${signed}` })).status === 401);
    await security.updateOption(db, events, as(alice), endpointId, "jwts", false);
  });

  it("the client IP header must be named before the option goes on", async () => {
    expect(await codeOf(security.updateOption(db, events, as(alice), endpointId, "ipCustomHeader", true))).toBe(
      "BAD_USER_INPUT",
    );
    await security.updateIpCustomHeader(db, events, as(alice), endpointId, "CF-Connecting-IP");
    const options = await security.updateOption(db, events, as(alice), endpointId, "ipCustomHeader", true);
    expect(options).toMatchObject({ ipCustomHeader: true, ipCustomHeaderName: "cf-connecting-ip" });
  });
});

describe("other processes", () => {
  /** A second service process as far as the directory can tell: its own event bus and events relay. */
  async function otherProcess() {
    const otherEvents = new DomainEvents();
    const relay = await relayEvents(db.$client, otherEvents, ["endpoint.changed"], () => {});
    const other = new SyncedEndpointDirectory(databaseEndpointRecords(db), otherEvents);
    await other.start();
    return {
      other,
      close: async () => {
        await other.close();
        await relay.close();
      },
    };
  }

  it("a directory in another process learns of a change through the events relay", async () => {
    const here = await relayEvents(db.$client, events, ["endpoint.changed"], () => {});
    const { other, close } = await otherProcess();
    try {
      const before = other.byExId(exId)?.record.options.hsts;
      await security.updateOption(db, events, as(alice), endpointId, "hsts", !before);
      await eventually(async () => other.byExId(exId)?.record.options.hsts === !before);
    } finally {
      await close();
      await here.close();
    }
  });

  it("when the relay's connection is lost, the directory reloads whole once it is back", async () => {
    const { other, close } = await otherProcess();
    try {
      const before = other.byExId(exId)?.record.options.hsts;
      await db.$client.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where query ilike 'listen%' and pid <> pg_backend_pid()",
      );
      // A change no event announces: only the reload after the reconnection can bring it.
      await db
        .update(securityTables.endpointSecurity)
        .set({ hsts: !before })
        .where(eq(securityTables.endpointSecurity.endpointId, endpointId));
      await eventually(async () => other.byExId(exId)?.record.options.hsts === !before);
    } finally {
      await close();
    }
  });

  it("an endpoint created after start is found on its first request", async () => {
    await db.insert(endpoints).values({
      accountId: alice,
      exId: "late0123456789abcdef",
      name: "wild-wind-3000",
      chain: "ethereum",
      network: "ethereum-sepolia",
    });
    expect((await chainId("/rpc/late0123456789abcdef")).body.result).toBe("0xaa36a7");
  });
});
