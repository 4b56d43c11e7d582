import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpointAudit, endpointsAudit, recordAudit } from "../../server/domains/audit/service.ts";
import { type Db, openDatabase, runMigrations } from "../../server/platform/db/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * One audit log for every domain (server/domains/audit): the migration that made it moves the rate
 * limits' and security's own audit rows into it, as they were, and the log keeps each account's entries
 * to it.
 */
const migrationsDir = path.resolve(import.meta.dirname, "../../server/platform/migrations");
let database: TestDatabase;
let db: Db;
let scratch: string;

beforeAll(async () => {
  // Empty: the migrations up to 0017 first, then the rest (the audit log's) over the rows they left.
  database = await createTestDatabase({ empty: true });
  db = openDatabase(database.url);
  // The migrations as they were before the audit log (up to 0017), applied first.
  scratch = mkdtempSync(path.join(tmpdir(), "migrations-"));
  cpSync(migrationsDir, scratch, { recursive: true });
  const journalFile = path.join(scratch, "meta/_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { idx: number; tag: string }[] };
  expect(journal.entries.some((e) => e.tag === "0018_audit_log")).toBe(true);
  journal.entries = journal.entries.filter((e) => e.idx <= 17);
  writeFileSync(journalFile, JSON.stringify(journal));
  await migrate(db, { migrationsFolder: scratch });
});

afterAll(async () => {
  await db?.$client.end();
  await database?.drop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the audit log", () => {
  it("takes the rate limits' and security's audit rows as they were, and the old tables go", async () => {
    const q = (text: string, values: unknown[] = []) => db.$client.query(text, values);
    const [alice, bob] = (await q("insert into accounts (id) values (default), (default) returning id")).rows as {
      id: string;
    }[];
    const user = (await q("insert into users (email, password_hash) values ('a@example.com', 'x') returning id"))
      .rows[0] as {
      id: string;
    };
    const endpointOf = async (accountId: string, exId: string) =>
      (
        (
          await q(
            "insert into endpoints (account_id, ex_id, name, chain, network) values ($1, $2, $3, 'ethereum', 'ethereum-sepolia') returning id",
            [accountId, exId, `calm-river-${exId}`],
          )
        ).rows[0] as { id: string }
      ).id;
    const aliceEndpoint = await endpointOf(alice.id, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    const bobEndpoint = await endpointOf(bob.id, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    const limiterId = "5b1f6a70-2b1c-4d4e-9a55-8f0d1c2b3a4e";
    await q(
      `insert into rate_limit_audits (account_id, endpoint_id, subject, subject_id, action, reason, user_id, user_email, user_role, changes, created_at)
       values ($1, $2, 'RATE_LIMITER', $3, 'CREATE', 'launch day', $4, 'a@example.com', 'ADMIN', '{"interval":"SECOND"}', '2026-11-01T10:00:00.123Z')`,
      [alice.id, aliceEndpoint, limiterId, user.id],
    );
    await q(
      `insert into security_audits (account_id, endpoint_id, action, subject, detail, user_id, user_email, user_role, created_at)
       values ($1, $2, 'ADD', 'ips', '203.0.113.7', null, null, 'OWNER', '2026-11-02T10:00:00.123456Z'),
              ($3, $4, 'TURN_ON', 'tokens', null, $5, 'a@example.com', 'ADMIN', '2026-11-03T10:00:00Z')`,
      [alice.id, aliceEndpoint, bob.id, bobEndpoint, user.id],
    );
    const before = (await q("select id from rate_limit_audits union all select id from security_audits")).rows;

    await runMigrations(db);

    const rateLimits = await endpointAudit(db, alice.id, "RATE_LIMITS", aliceEndpoint, 200);
    expect(rateLimits).toEqual([
      expect.objectContaining({
        area: "RATE_LIMITS",
        endpointId: aliceEndpoint,
        subject: "RATE_LIMITER",
        subjectId: limiterId,
        action: "CREATE",
        reason: "launch day",
        detail: null,
        userId: user.id,
        userEmail: "a@example.com",
        userRole: "ADMIN",
        changes: { interval: "SECOND" },
        createdAt: new Date("2026-11-01T10:00:00.123Z"),
      }),
    ]);
    const security = await endpointsAudit(db, alice.id, "SECURITY", [aliceEndpoint, bobEndpoint], 100);
    expect(security).toEqual([
      expect.objectContaining({
        area: "SECURITY",
        endpointId: aliceEndpoint,
        action: "ADD",
        subject: "ips",
        detail: "203.0.113.7",
        reason: null,
        userId: null,
        userRole: "OWNER",
        changes: {},
      }),
    ]);
    expect((await endpointsAudit(db, bob.id, "SECURITY", [bobEndpoint], 100)).map((e) => e.subject)).toEqual([
      "tokens",
    ]);
    const moved = (await q("select id from audit_log")).rows;
    expect(new Set(moved.map((r) => r.id))).toEqual(new Set(before.map((r) => r.id)));
    const left = await q(
      "select to_regclass('public.rate_limit_audits') as r, to_regclass('public.security_audits') as s",
    );
    expect(left.rows[0]).toEqual({ r: null, s: null });
  });

  it("records an entry for its account only, with the actor's e-mail, newest first", async () => {
    const q = (text: string, values: unknown[] = []) => db.$client.query(text, values);
    const [carol, dave] = (await q("insert into accounts (id) values (default), (default) returning id")).rows as {
      id: string;
    }[];
    const user = (await q("insert into users (email, password_hash) values ('c@example.com', 'x') returning id"))
      .rows[0] as {
      id: string;
    };
    const endpoint = (
      (
        await q(
          "insert into endpoints (account_id, ex_id, name, chain, network) values ($1, 'cccccccccccccccccccccccccccccccc', 'calm-river-c', 'ethereum', 'ethereum-sepolia') returning id",
          [carol.id],
        )
      ).rows[0] as { id: string }
    ).id;
    await db.transaction(async (tx) => {
      const actor = { accountId: carol.id, userId: user.id, role: "ADMIN" as const };
      await recordAudit(tx, actor, {
        area: "SECURITY",
        endpointId: endpoint,
        action: "ADD",
        subject: "ips",
        detail: "1",
      });
      await recordAudit(tx, actor, { area: "SECURITY", endpointId: endpoint, action: "TURN_ON", subject: "ips" });
    });
    const entries = await endpointAudit(db, carol.id, "SECURITY", endpoint, 10);
    // Two entries of one transaction keep the order they were made in.
    expect(entries.map((e) => [e.action, e.userEmail])).toEqual([
      ["TURN_ON", "c@example.com"],
      ["ADD", "c@example.com"],
    ]);
    expect(await endpointAudit(db, carol.id, "RATE_LIMITS", endpoint, 10)).toEqual([]);
    expect(await endpointAudit(db, dave.id, "SECURITY", endpoint, 10)).toEqual([]);
    expect(await endpointsAudit(db, dave.id, "SECURITY", [endpoint], 10)).toEqual([]);
  });
});
