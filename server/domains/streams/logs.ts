import type { LogLevel } from "../../dataplane/engine/store.ts";
import type { Executor } from "../../platform/db/index.ts";
import { storableText } from "../../platform/text.ts";
import { streamLogs } from "./tables.ts";

/** The one writer of a stream's (or webhook's) log lines, from the engine and the service alike. */
export async function writeStreamLog(
  db: Executor,
  accountId: string,
  streamId: string,
  level: LogLevel,
  message: string,
): Promise<void> {
  await db.insert(streamLogs).values({ accountId, streamId, level, message: storableText(message.slice(0, 4000)) });
}
