import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestProject } from "vitest/node";
import { createDestination, type PostgresAttributes } from "../../../server/dataplane/destinations/index.ts";
import startTestServer, { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { testEgress } from "../../support/egress.ts";

// The shared test-infra helper: its globalSetup starts an embedded PostgreSQL (or uses DATABASE_URL);
// the unit project has no globalSetup, so this file starts it itself.
let stopServer: () => Promise<void>;
let db: TestDatabase;
let attrs: PostgresAttributes;
const PASSWORD_MARK = "pw";

beforeAll(async () => {
  if (!process.env.TEST_DATABASE_URL) {
    stopServer = await startTestServer({ provide: () => undefined } as unknown as TestProject);
  }
  db = await createTestDatabase();
  const u = new URL(db.url);
  attrs = {
    type: "POSTGRES",
    host: u.hostname,
    port: Number(u.port),
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1),
    tableName: "stream_rows",
    sslmode: "DISABLE",
  };
}, 180_000);

afterAll(async () => {
  await db?.drop();
  await stopServer?.();
}, 60_000);

const ctx = { streamId: "s-1", network: "local", dataset: "BLOCK" };

describe("postgres destination", () => {
  it("test() checks access without writing, then deliver() creates the table and inserts rows", async () => {
    const d = createDestination(attrs, ctx, { egress: testEgress });
    try {
      const t = await d.test();
      expect(t).toMatchObject({
        ok: true,
        message: 'connected; table "stream_rows" does not exist yet and will be created on first delivery',
      });
      const ack = await d.deliver({ startBlock: 5, endBlock: 6, payloadJson: '[{"number":"0x5"},{"number":"0x6"}]' });
      expect(ack.detail).toBe('"stream_rows" row 1');
      await d.deliver({ startBlock: 7, endBlock: 7, payloadJson: '{"x":1}', isReorg: true });
      expect((await d.test()).message).toBe('connected; table "stream_rows" exists and accepts inserts');
    } finally {
      await d.close();
    }
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        "SELECT stream_id, network, dataset, block_start, block_end, is_reorg, data, received_at FROM stream_rows ORDER BY id",
      );
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({
        stream_id: "s-1",
        network: "local",
        dataset: "BLOCK",
        block_start: "5",
        block_end: "6",
        is_reorg: false,
        data: [{ number: "0x5" }, { number: "0x6" }],
      });
      expect(rows[1]).toMatchObject({ is_reorg: true, data: { x: 1 } });
      expect(rows[0].received_at).toBeInstanceOf(Date);
    } finally {
      await client.end();
    }
  });

  it("writes into a schema-qualified table", async () => {
    const d = createDestination({ ...attrs, tableName: "public.other_rows" }, ctx, { egress: testEgress });
    try {
      expect((await d.deliver({ startBlock: 1, endBlock: 1, payloadJson: "[]" })).detail).toBe(
        '"public"."other_rows" row 1',
      );
    } finally {
      await d.close();
    }
  });

  it("rejects a table name that is not an identifier", () => {
    for (const tableName of ['rows"; DROP TABLE x; --', "a.b.c", "1rows", "rows table"]) {
      expect(() => createDestination({ ...attrs, tableName }, ctx, { egress: testEgress })).toThrow(
        /must be a plain identifier/,
      );
    }
  });

  it("honours sslmode REQUIRE (the test server has no TLS, so it is refused)", async () => {
    const d = createDestination({ ...attrs, sslmode: "REQUIRE" }, ctx, { egress: testEgress });
    try {
      const t = await d.test();
      expect(t.ok).toBe(false);
      expect(t.message).toMatch(/PostgreSQL: .*(SSL|ssl)/);
    } finally {
      await d.close();
    }
  });

  it("reports a wrong password without revealing it", async () => {
    const password = `${PASSWORD_MARK}-wrong-Secret-9f8e7d`;
    const d = createDestination({ ...attrs, password }, ctx, { egress: testEgress });
    try {
      const t = await d.test();
      expect(t.ok).toBe(false);
      expect(t.message).toMatch(/password authentication failed/);
      expect(t.message).not.toContain(password);
      const err = (await d
        .deliver({ startBlock: 1, endBlock: 1, payloadJson: "[]" })
        .catch((e: unknown) => e)) as Error;
      expect(err.message).toMatch(/PostgreSQL: password authentication failed/);
      expect(err.message).not.toContain(password);
    } finally {
      await d.close();
    }
  });
});
