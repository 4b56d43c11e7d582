/**
 * Helpers for the streams and webhooks API tests: the service on a fresh database with a local anvil
 * as the chain node of ethereum-mainnet and the delivery engine running, plus a real HTTP receiver.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { type StreamEngine, startStreamEngine } from "../../server/dataplane/engine/index.ts";
import { engineStore } from "../../server/domains/streams/engine-store.ts";
import type { Resolvers } from "../../server/graphql/resolvers.ts";
import type { Db } from "../../server/platform/db/index.ts";
import type { DomainEvents } from "../../server/platform/events.ts";
import { createMailer } from "../../server/platform/mail.ts";
import { apiResolvers, GqlClient, signIn, type TestApp, type TestUser } from "../support/api.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { TEST_EGRESS_ALLOW } from "../support/egress.ts";
import { TEST_SIGNUPS_PER_HOUR } from "../support/signups.ts";

export const NETWORK = "ethereum-mainnet";
export const DEMO_PASSWORD = "demo-password-for-tests";

export interface StreamsTestApp {
  url: string;
  dataDir: string;
  db: Db;
  database: TestDatabase;
  anvil: AnvilNode;
  engine: StreamEngine;
  /** The API's resolvers, every domain's merged (the input proofs read their rules). */
  resolvers: Resolvers;
  /** For the support helpers' signUp/signIn. */
  asTestApp: TestApp;
  /** The service's events (a test that acts behind the API tells the service's caches with them). */
  events: DomainEvents;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  close(): Promise<void>;
}

/**
 * `egressAllow` is the service's NODEPLANE_EGRESS_ALLOW: loopback receivers by default, "" for the
 * default egress policy.
 */
export async function startStreamsApp(
  options: { engine?: boolean; egressAllow?: string } = {},
): Promise<StreamsTestApp> {
  const { buildApp } = await import("../../server/app.ts");
  const { loadConfig } = await import("../../server/platform/config.ts");
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), "nodeplane-streams-"));
  const anvil = await startAnvil({ chainId: 1 });
  const config = loadConfig({
    ...process.env,
    NODE_ENV: "test",
    DATABASE_URL: database.url,
    PORT: "0",
    HOST: "127.0.0.1",
    NODEPLANE_DATA_DIR: dataDir,
    NODEPLANE_DEMO_PASSWORD: DEMO_PASSWORD,
    NODEPLANE_EGRESS_ALLOW: options.egressAllow ?? TEST_EGRESS_ALLOW,
    NODEPLANE_SIGNUPS_PER_HOUR: TEST_SIGNUPS_PER_HOUR,
    // The test runs its own engine, against its own anvil.
    NODEPLANE_ROLES: "api,proxy",
  });
  const built = await buildApp(config);
  await built.app.listen({ port: 0, host: "127.0.0.1" });
  const address = built.app.server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  const url = `http://127.0.0.1:${address.port}`;
  const upstreams = staticUpstreams([
    { network: NETWORK, chainId: 1, httpUrl: anvil.httpUrl, wsUrl: anvil.wsUrl, source: "local" },
  ]);
  const mailer = createMailer(built.db);
  // The service's own (its egress policy from its config, its function runs), so this engine delivers
  // where and as the service's would.
  const destinationDeps = built.services.streams.destinationDeps;
  const engine = startStreamEngine({
    db: built.db,
    store: engineStore,
    destinationDeps,
    log: built.log,
    config,
    upstreams,
    mailer,
    // As the service's engine has it (app.ts): filters use the account's key-value store.
    filterHelpers: built.services.streams.filterHelpers,
    leaseTtlMs: 3000,
    pollMs: 100,
    tipPollMs: 100,
    metricsFlushMs: 0,
  });
  // The streams API reads blocks from this test's anvil and wakes this engine.
  Object.assign(built.services.streams, { upstreams, wake: engine.wake, mailer, destinationDeps });
  if (options.engine === false) await engine.stop();
  let nextId = 1;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(anvil.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  return {
    url,
    dataDir,
    db: built.db,
    database,
    anvil,
    engine,
    resolvers: apiResolvers(built),
    asTestApp: { client: () => new GqlClient(url) } as unknown as TestApp,
    events: built.services.events,
    rpc,
    async close() {
      await engine.stop().catch(() => undefined);
      await built.close();
      await anvil.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The streams app signed in as the demo owner, with `blocks` blocks mined (1..blocks): a test file's usual start. */
export async function startStreamsAppAsOwner(
  options: { engine?: boolean; blocks?: number; egressAllow?: string } = {},
): Promise<{ t: StreamsTestApp; owner: TestUser }> {
  const t = await startStreamsApp({ engine: options.engine, egressAllow: options.egressAllow });
  const owner = await signIn(t.asTestApp, "demo@nodeplane.local", DEMO_PASSWORD);
  if (options.blocks) await t.rpc("anvil_mine", [`0x${options.blocks.toString(16)}`]);
  return { t, owner };
}

export interface Received {
  headers: IncomingMessage["headers"];
  body: string;
  json: unknown;
  at: number;
}

/** A real HTTP receiver; `respond` decides each answer's status (default 200). */
export async function startReceiver(
  respond: (r: Received, index: number) => number | Promise<number> = () => 200,
  answerOf: (status: number) => string = (status) => (status < 300 ? "ok" : "unavailable"),
) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      let raw = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") raw = gunzipSync(raw);
      const body = raw.toString("utf8");
      const r: Received = { headers: req.headers, body, json: body ? JSON.parse(body) : null, at: Date.now() };
      const status = await respond(r, received.length);
      if (status >= 200 && status < 300) received.push(r);
      res.statusCode = status;
      res.end(answerOf(status));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  return {
    url: `http://127.0.0.1:${address.port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Block numbers of a BLOCK-dataset payload (an array of blocks). */
export const blockNumbers = (payload: unknown) =>
  (payload as { number: string }[]).map((b) => Number.parseInt(b.number, 16));

/** A stream's status and why, as its owner reads it. */
export async function streamStatusOf(client: GqlClient, id: string) {
  const { stream } = await client.gqlOk<{ stream: { status: string; statusReason: string | null } }>(
    "query($id: ID!) { stream(id: $id) { status statusReason } }",
    { id },
  );
  return stream;
}

/** A stream's log lines, newest first, as its owner reads them. */
export async function streamLogMessages(client: GqlClient, id: string): Promise<string[]> {
  const { streamLogs } = await client.gqlOk<{ streamLogs: { logs: { message: string }[] } }>(
    "query($id: ID!) { streamLogs(id: $id, first: 100) { logs { message } } }",
    { id },
  );
  return streamLogs.logs.map((l) => l.message);
}
