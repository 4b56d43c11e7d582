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
import { type Db, openDatabase, runMigrations } from "../../server/platform/db/index.ts";
import { DomainEvents } from "../../server/platform/events.ts";
import {
  curlOf,
  type FirstRequest,
  firstRequest,
  JWT_PLACEHOLDER,
  TOKEN_PLACEHOLDER,
} from "../../src/widgets/first-request.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

// The first-request card's sample, built by the function the widget uses from the endpoint's security
// as the service reports it, run against a real endpoint (PostgreSQL-backed directory, the proxy, a
// real anvil) with token, JWT and referrer on: with its placeholders filled it gets the chain's answer.

let database: TestDatabase;
let db: Db;
let node: AnvilNode;
let app: FastifyInstance;
let directory: SyncedEndpointDirectory;
let base: string;
const events = new DomainEvents();
let accountId: string;
let endpointId: string;
const exId = "first0123456789abcdef01";

beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url);
  await runMigrations(db);
  [{ id: accountId }] = await db.insert(accounts).values({}).returning({ id: accounts.id });
  [{ id: endpointId }] = await db
    .insert(endpoints)
    .values({ accountId, exId, name: "quiet-lake-1000", chain: "ethereum", network: "ethereum-sepolia" })
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
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await directory?.close();
  await node?.stop();
  await db?.$client.end();
  await database?.drop();
});

/** Sends a sample's request as a shell would run its cURL: same URL, headers and body. */
async function send(request: FirstRequest, fill: Record<string, string>) {
  const filled = (text: string) => Object.entries(fill).reduce((t, [from, to]) => t.replaceAll(from, to), text);
  const res = await fetch(filled(request.url), {
    method: "POST",
    headers: Object.fromEntries(request.headers.map(([name, value]) => [name, filled(value)])),
    body: request.body,
  });
  return { status: res.status, body: (await res.json()) as { result?: string } };
}

async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 3000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("the change did not reach the proxy");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the first-request sample with token, JWT and referrer on", () => {
  it("names every method, carries its header, and with the placeholders filled gets the chain's answer", async () => {
    const actor: security.Actor = { accountId, userId: null, role: "OWNER" };
    const token = await db.transaction((tx) => security.createInitialToken(tx, accountId, endpointId));
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    await security.createJwt(db, events, actor, endpointId, {
      name: "backend",
      kid: "ec-1",
      publicKey: await exportSPKI(publicKey),
    });
    await security.updateOption(db, events, actor, endpointId, "jwts", true);
    await security.createEntry(db, events, actor, endpointId, "REFERRER", "dapp.example.org");
    await security.updateOption(db, events, actor, endpointId, "referrers", true);

    const settings = await security.securityOf(db, accountId, endpointId);
    const request = firstRequest({
      url: `${base}/rpc/${exId}`,
      method: "eth_chainId",
      tokenRequired: true,
      security: {
        options: settings.options,
        jwts: settings.jwts.map((j) => ({ name: j.name, kid: j.kid })),
        referrers: settings.referrers.map((r) => ({ referrer: r.referrer })),
      },
    });
    expect(request.active.map((m) => m.key)).toEqual(["token", "jwt", "referrer"]);
    expect(request.active[1].text).toContain("kid ec-1");
    expect(request.url).toBe(`${base}/rpc/${exId}/${TOKEN_PLACEHOLDER}`);
    expect(request.headers).toContainEqual(["Authorization", `Bearer ${JWT_PLACEHOLDER}`]);
    expect(request.headers).toContainEqual(["Origin", "https://dapp.example.org"]);
    expect(curlOf(request)).toContain(`-H "Authorization: Bearer ${JWT_PLACEHOLDER}"`);

    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "ec-1" })
      .setExpirationTime("5m")
      .sign(privateKey);
    const filled = { [TOKEN_PLACEHOLDER]: token, [JWT_PLACEHOLDER]: jwt };
    await eventually(async () => (await send(request, filled)).status === 200);
    expect((await send(request, filled)).body.result).toBe("0xaa36a7");

    // Each header the sample adds is needed: without it the same call is refused.
    const without = (name: string): FirstRequest => ({
      ...request,
      headers: request.headers.filter(([header]) => header !== name),
    });
    expect((await send(without("Authorization"), filled)).status).toBe(401);
    expect((await send(without("Origin"), filled)).status).toBe(403);
    expect((await send(request, { ...filled, [TOKEN_PLACEHOLDER]: "0".repeat(64) })).status).toBe(401);
  });
});
