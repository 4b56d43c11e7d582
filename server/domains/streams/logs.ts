import { and, eq, lt, lte, sql } from "drizzle-orm";
import type { LogLevel } from "../../dataplane/engine/store.ts";
import type { Executor } from "../../platform/db/index.ts";
import { storableText } from "../../platform/text.ts";
import { streamLogs } from "./tables.ts";

/**
 * What a stream's (or webhook's) log keeps: its newest lines of the last days, as the request
 * inspector keeps its newest requests of a day (decisions 1100 and 1320). The Logs tabs say so.
 */
export const STREAM_LOG_KEPT_LINES = 1000;
export const STREAM_LOG_KEPT_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The oldest time a kept line may have: reads show nothing older, writes delete it. */
export function streamLogKeptSince(now = new Date()): Date {
  return new Date(now.getTime() - STREAM_LOG_KEPT_DAYS * DAY_MS);
}

/**
 * The one writer of a stream's (or webhook's) log lines, from the engine and the service alike. Each
 * line written drops the stream's lines past the bounds, so a log never holds more than it shows.
 */
export async function writeStreamLog(
  db: Executor,
  accountId: string,
  streamId: string,
  level: LogLevel,
  message: string,
): Promise<void> {
  await db.insert(streamLogs).values({ accountId, streamId, level, message: storableText(message.slice(0, 4000)) });
  // The id of the newest line past the count, found on the (stream_id, id) index; none when there are fewer.
  const pastCount = sql`(select ${streamLogs.id} from ${streamLogs} where ${streamLogs.streamId} = ${streamId}
    order by ${streamLogs.id} desc offset ${STREAM_LOG_KEPT_LINES} limit 1)`;
  await db
    .delete(streamLogs)
    .where(
      and(
        eq(streamLogs.streamId, streamId),
        sql`(${lte(streamLogs.id, pastCount)} or ${lt(streamLogs.createdAt, streamLogKeptSince())})`,
      ),
    );
}
