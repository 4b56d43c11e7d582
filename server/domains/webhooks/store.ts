import { and, desc, eq, ilike, inArray, isNotNull, lt, or, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { containing } from "../../platform/db/like.ts";
import { isUuid } from "../../platform/ids.ts";
import type { CursorKey } from "../../platform/paging.ts";
import { type StreamRow, streams } from "../streams/index.ts";

/**
 * The webhooks' queries. A webhook is a row of the delivery engine's table with product WEBHOOK (see
 * service.ts): every query here takes the account and reads or changes only its webhooks, never a stream.
 */
export type WebhookRow = StreamRow;

const isWebhook = eq(streams.product, "WEBHOOK");

/** Webhooks page newest first: a position is a creation time and the id that breaks ties. */
export const webhookCursorShape = ["timestamp", "uuid"] as const;
export const webhookCursorOf = (row: WebhookRow) => [row.createdAt, row.id] as const;

export async function getWebhook(db: Executor, accountId: string, id: string): Promise<WebhookRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(streams)
    .where(and(eq(streams.id, id), eq(streams.accountId, accountId), isWebhook));
  return row;
}

export async function listWebhooks(
  db: Executor,
  accountId: string,
  options: { limit: number; after: CursorKey<typeof webhookCursorShape> | null; search?: string | null },
) {
  const where = [eq(streams.accountId, accountId), isWebhook];
  if (options.search) {
    const term = containing(options.search);
    const any = or(
      ilike(streams.name, term),
      ilike(streams.network, term),
      ilike(streams.dataset, term),
      sql`${streams.id}::text = ${options.search}`,
    );
    if (any) where.push(any);
  }
  const base = and(...where);
  const after = options.after;
  const page = after
    ? and(base, or(lt(streams.createdAt, after[0]), and(eq(streams.createdAt, after[0]), lt(streams.id, after[1]))))
    : base;
  const rows = await db
    .select()
    .from(streams)
    .where(page)
    .orderBy(desc(streams.createdAt), desc(streams.id))
    .limit(options.limit);
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(streams).where(base);
  return { rows, totalCount: count };
}

export async function deleteWebhook(db: Executor, accountId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const rows = await db
    .delete(streams)
    .where(and(eq(streams.id, id), eq(streams.accountId, accountId), isWebhook))
    .returning({ id: streams.id });
  return rows.length === 1;
}

/** Delivery resumes at this block on the webhook's next activation. */
export async function setCheckpoint(db: Executor, accountId: string, id: string, nextBlock: number): Promise<void> {
  await db.execute(sql`insert into stream_checkpoints (stream_id, next_block)
    select id, ${nextBlock} from streams where id = ${id} and account_id = ${accountId} and product = 'WEBHOOK'
    on conflict (stream_id) do update set next_block = excluded.next_block, updated_at = now()`);
}

/** The account's webhooks the engine stopped because they failed, most recent failure first. */
export async function failingWebhooks(db: Executor, accountId: string, limit: number): Promise<WebhookRow[]> {
  return db
    .select()
    .from(streams)
    .where(
      and(
        eq(streams.accountId, accountId),
        isWebhook,
        inArray(streams.status, ["PAUSED", "TERMINATED"]),
        isNotNull(streams.failedAt),
      ),
    )
    .orderBy(desc(streams.failedAt))
    .limit(limit);
}
