import { readFileSync } from "node:fs";
import path from "node:path";
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memberships } from "../../server/domains/account/tables.ts";
import { STREAM_LOG_KEPT_DAYS, STREAM_LOG_KEPT_LINES, writeStreamLog } from "../../server/domains/streams/logs.ts";
import { streamLogs, streams } from "../../server/domains/streams/tables.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { signUp, useTestApp } from "../support/api.ts";

/**
 * A stream's log keeps its newest STREAM_LOG_KEPT_LINES lines of the last STREAM_LOG_KEPT_DAYS days
 * (decision 1320): the oldest go as new lines are written, older ones are neither shown nor kept, and
 * the Logs tabs say the bound.
 */
const ctx = useTestApp();
let db: Db;

beforeAll(() => {
  db = openDatabase(ctx.app.database.url, 2);
});
afterAll(async () => {
  await db?.$client.end();
});

async function newStream() {
  const owner = await signUp(ctx.app);
  const [{ accountId }] = await db
    .select({ accountId: memberships.accountId })
    .from(memberships)
    .where(eq(memberships.userId, owner.viewer.userId));
  const [{ id }] = await db
    .insert(streams)
    .values({
      accountId,
      name: "logged",
      network: "ethereum-sepolia",
      dataset: "BLOCK",
      destination: "WEBHOOK",
      destinationAttributes: { url: "https://hooks.example.com/1" },
      startRange: 1,
    })
    .returning({ id: streams.id });
  return { owner, accountId, streamId: id };
}

const keptMessages = async (streamId: string) =>
  (
    await db
      .select({ message: streamLogs.message })
      .from(streamLogs)
      .where(eq(streamLogs.streamId, streamId))
      .orderBy(asc(streamLogs.id))
  ).map((row) => row.message);

describe("a stream's log", () => {
  it(`keeps its newest ${STREAM_LOG_KEPT_LINES} lines: the oldest go as new ones are written`, async () => {
    const { accountId, streamId } = await newStream();
    await db.insert(streamLogs).values(
      Array.from({ length: STREAM_LOG_KEPT_LINES }, (_, i) => ({
        accountId,
        streamId,
        level: "INFO",
        message: `${i}`,
      })),
    );
    for (const i of [0, 1, 2]) await writeStreamLog(db, accountId, streamId, "INFO", `new ${i}`);
    const kept = await keptMessages(streamId);
    expect(kept).toHaveLength(STREAM_LOG_KEPT_LINES);
    expect(kept.slice(0, 2)).toEqual(["3", "4"]);
    expect(kept.slice(-3)).toEqual(["new 0", "new 1", "new 2"]);
  });

  it(`shows and keeps no line older than ${STREAM_LOG_KEPT_DAYS} days`, async () => {
    const { owner, accountId, streamId } = await newStream();
    for (const message of ["old", "recent"]) await writeStreamLog(db, accountId, streamId, "INFO", message);
    await db
      .update(streamLogs)
      .set({ createdAt: sql`now() - make_interval(days => ${STREAM_LOG_KEPT_DAYS}, hours => 1)` })
      .where(eq(streamLogs.message, "old"));
    const shown = async () =>
      (
        await owner.client.gqlOk<{ streamLogs: { logs: { message: string }[] } }>(
          "query($id: ID!) { streamLogs(id: $id) { logs { message } } }",
          { id: streamId },
        )
      ).streamLogs.logs.map((line) => line.message);
    expect(await shown()).toEqual(["recent"]);
    expect(await keptMessages(streamId)).toEqual(["old", "recent"]);
    await writeStreamLog(db, accountId, streamId, "INFO", "next");
    expect(await keptMessages(streamId)).toEqual(["recent", "next"]);
  });

  it("states its bound on the stream's and the webhook's Logs tab", () => {
    for (const screen of ["streams", "webhooks"]) {
      const manifest = JSON.parse(
        readFileSync(path.resolve(import.meta.dirname, `../../screens/${screen}/logs.screen.json`), "utf8"),
      ) as { description: string };
      expect(manifest.description, screen).toContain(
        `the newest ${STREAM_LOG_KEPT_LINES.toLocaleString("en")} lines of the last ${STREAM_LOG_KEPT_DAYS} days`,
      );
    }
  });
});
