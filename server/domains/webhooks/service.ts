import type { WebhookCreateInput, WebhookUpdateInput } from "../../../schemas/generated/entities.ts";
import { createDestination, type WebhookAttributes } from "../../dataplane/destinations/index.ts";
import { MASK, maskUrlPassword } from "../../dataplane/engine/config.ts";
import type { Db } from "../../platform/db/index.ts";
import { AppError, foundOr, notFound } from "../../platform/errors.ts";
import { connection, cursorArgument, pageSize } from "../../platform/paging.ts";
import type { SecretBox } from "../../platform/secrets.ts";
import { bucketSeries } from "../../platform/time-buckets.ts";
import * as pipeline from "../streams/index.ts";
import { type StreamsServices, streamsRuntime } from "../streams/index.ts";
import type { WebhookRow } from "./store.ts";
import * as store from "./store.ts";

/**
 * Webhooks: the spec's simpler product on the stream engine. A webhook is a stream of the
 * BLOCK_WITH_RECEIPTS dataset, one block per delivery, to a WEBHOOK destination, with reorgs fixed;
 * it bills in credits (see dataplane/engine/metrics.ts).
 */
export const WEBHOOK_DATASET = "BLOCK_WITH_RECEIPTS";

/** What creating and updating share: every field may be absent on an update. */
type WebhookInput = Omit<WebhookCreateInput, "name" | "network" | "url"> & Partial<WebhookCreateInput>;

function toStreamInput(input: WebhookInput, current?: WebhookRow): pipeline.StreamInput {
  const attrsChanged = input.url !== undefined || input.compression !== undefined || input.securityToken !== undefined;
  const base = current?.destinationAttributes ?? {};
  return {
    name: input.name,
    network: input.network,
    filterFunction: input.filterFunction,
    startRange: input.startRange,
    notificationEmail: input.notificationEmail,
    status: input.status,
    ...(current
      ? {}
      : {
          dataset: WEBHOOK_DATASET,
          datasetBatchSize: 1,
          elasticBatchEnabled: true,
          includeStreamMetadata: "NONE",
          destination: "WEBHOOK",
          fixBlockReorgs: true,
          filterVersion: "V5",
        }),
    destinationAttributes:
      !current || attrsChanged
        ? Object.fromEntries(
            Object.entries({
              ...base,
              url: input.url ?? base.url,
              compression: input.compression ?? base.compression ?? "NONE",
              securityToken: input.securityToken,
            }).filter(([, v]) => v !== undefined),
          )
        : undefined,
  };
}

/** The account's webhook with this id, or NOT_FOUND. */
export async function ownedWebhook(db: Db, accountId: string, id: string): Promise<WebhookRow> {
  return foundOr(await store.getWebhook(db, accountId, id), "Webhook");
}

/** The account's webhooks, newest first. */
export async function listWebhooks(
  db: Db,
  accountId: string,
  args: { first?: number | null; after?: string | null; search?: string | null },
) {
  const size = pageSize(args.first);
  const page = await store.listWebhooks(db, accountId, {
    limit: size + 1,
    after: cursorArgument(args.after, store.webhookCursorShape),
    search: args.search,
  });
  return { ...connection(page.rows, size, store.webhookCursorOf), totalCount: page.totalCount };
}

/** Webhooks as the API shows them: their URL's password and security token masked, their progress. */
export async function shownWebhooks(db: Db, box: SecretBox, accountId: string, rows: WebhookRow[]) {
  const progress = await pipeline.progressOf(
    db,
    accountId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => {
    const { hasSecrets } = pipeline.shownAttributes(row, box);
    return {
      id: row.id,
      createdAt: row.createdAt,
      name: row.name,
      status: row.status,
      state: pipeline.streamState(row),
      statusReason: row.statusReason,
      failedAt: row.failedAt,
      network: row.network,
      url: String(maskUrlPassword(row.destinationAttributes.url ?? "")),
      filterFunction: row.filterFunction,
      compression: String(row.destinationAttributes.compression ?? "NONE"),
      securityToken: hasSecrets ? MASK : null,
      hasSecurityToken: hasSecrets,
      sequence: row.sequence,
      startRange: row.startRange,
      notificationEmail: row.notificationEmail,
      lastDeliveredBlock: progress.get(row.id)?.lastDeliveredBlock ?? null,
    };
  });
}

export const pauseWebhook = (db: Db, accountId: string, id: string) =>
  pipeline.pauseStream(db, accountId, id, "WEBHOOK");

export async function deleteWebhook(db: Db, accountId: string, id: string) {
  if (!(await store.deleteWebhook(db, accountId, id))) throw notFound("Webhook");
  return { success: true, message: "Webhook deleted.", error: null };
}

/** A webhook's log, newest first, after checking the account owns it. */
export const webhookLogs = (
  db: Db,
  accountId: string,
  id: string,
  args: { first?: number | null; after?: string | null; levels?: string[] | null; searchText?: string | null },
) => pipeline.streamLogs(db, accountId, id, "WEBHOOK", args);

/** A webhook's delivery history, newest first, after checking the account owns it. */
export const webhookDeliveries = (
  db: Db,
  accountId: string,
  id: string,
  args: { first?: number | null; after?: string | null; outcomes?: string[] | null; search?: string | null },
) => pipeline.listDeliveries(db, accountId, id, "WEBHOOK", args);

/** The account's webhooks the engine stopped because they failed, most recent first. */
export const failingWebhooks = (db: Db, accountId: string) =>
  store.failingWebhooks(db, accountId, pipeline.FAILING_SHOWN);

export const latestBlock = (services: StreamsServices, who: pipeline.ChainReadFor, network: string) =>
  pipeline.latestBlock(services, who, network);

export async function createWebhook(
  db: Db,
  box: SecretBox,
  services: StreamsServices,
  accountId: string,
  input: WebhookCreateInput,
) {
  const row = await pipeline.createStream(db, box, accountId, toStreamInput(input), "WEBHOOK", services);
  if (row.status === "ACTIVE") streamsRuntime(services)?.wake();
  return row;
}

export async function updateWebhook(
  db: Db,
  box: SecretBox,
  services: StreamsServices,
  accountId: string,
  input: WebhookUpdateInput,
) {
  const current = await ownedWebhook(db, accountId, input.id);
  const patch = toStreamInput(input, current);
  return pipeline.updateStream(db, box, accountId, input.id, patch, "WEBHOOK", services);
}

/** LATEST skips what was missed while paused: delivery starts at the current tip. */
export async function activateWebhook(
  db: Db,
  services: StreamsServices,
  accountId: string,
  id: string,
  from: "LAST" | "LATEST",
) {
  const current = await ownedWebhook(db, accountId, id);
  if (from === "LATEST")
    await store.setCheckpoint(
      db,
      accountId,
      current.id,
      await pipeline.latestBlock(services, { db, accountId }, current.network),
    );
  return pipeline.activateStream(db, accountId, id, "WEBHOOK", services);
}

/**
 * Totals and points of what a webhook processed, delivered and billed in its window (from `start`, or
 * from its first recorded minute without one, to `end`, default now), per point of the window's step.
 */
export async function webhookMetrics(db: Db, accountId: string, id: string, start: Date | null, end: Date | null) {
  const { window, rows } = await pipeline.metricBuckets(db, accountId, id, "WEBHOOK", start, end);
  const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((a, r) => a + f(r), 0);
  const points = bucketSeries(window, rows);
  const processed = points.counts((r) => r.blocks);
  const delivered = points.counts((r) => r.delivered);
  const bytes = points.counts((r) => r.bytesBillable);
  return {
    ...window,
    processed: sum((r) => r.blocks),
    delivered: sum((r) => r.delivered),
    bytesTotal: sum((r) => r.bytesBillable),
    credits: sum((r) => r.credits),
    datapoints: processed.map((point, i) => ({
      timestamp: point.timestamp,
      processed: point.value,
      delivered: delivered[i].value,
      bytes: bytes[i].value,
    })),
  };
}

export async function rawPayload(
  services: StreamsServices,
  who: pipeline.ChainReadFor,
  network: string,
  blockNumber: number,
) {
  const batch = await pipeline.readBatch(services, who, network, WEBHOOK_DATASET, blockNumber, 1);
  return pipeline.payloadResult(JSON.stringify(batch.items));
}

export function testUrl(
  services: StreamsServices,
  accountId: string,
  input: { url: string; compression?: string; securityToken?: string },
) {
  // The schema checked the webhook attributes; `type` names which destination they are for.
  return pipeline.testDestination(services, accountId, { ...input, type: "WEBHOOK" } as WebhookAttributes);
}

export function testFilter(
  services: StreamsServices,
  who: pipeline.ChainReadFor,
  input: { network: string; blockNumber: number; filterFunction: string },
) {
  return pipeline.runFilterOn(services, who, { ...input, dataset: WEBHOOK_DATASET });
}

/** Sends one block (through the webhook's filter) to its URL now, outside the engine. */
export async function sendPayload(
  db: Db,
  box: SecretBox,
  services: StreamsServices,
  accountId: string,
  id: string,
  blockNumber: number,
) {
  const row = await ownedWebhook(db, accountId, id);
  let payloadJson: string | null;
  if (row.filterFunction) {
    const r = await pipeline.runFilterOn(
      services,
      { db, accountId },
      {
        network: row.network,
        dataset: WEBHOOK_DATASET,
        blockNumber,
        filterFunction: row.filterFunction,
        filterVersion: row.filterVersion,
      },
    );
    if (r.error) throw new AppError("BAD_USER_INPUT", `The filter failed: ${r.error}`);
    payloadJson = r.result === null ? null : JSON.stringify(r.result);
  } else {
    const batch = await pipeline.readBatch(services, { db, accountId }, row.network, WEBHOOK_DATASET, blockNumber, 1);
    payloadJson = JSON.stringify(batch.items);
  }
  if (payloadJson === null)
    return { success: true, message: "The filter skipped this block: nothing was sent.", durationMs: 0 };
  const destination = createDestination(
    pipeline.storedAttributes(box, row),
    { streamId: row.id, network: row.network, dataset: WEBHOOK_DATASET },
    services.streams.destinationDeps,
  );
  try {
    const ack = await destination.deliver({ startBlock: blockNumber, endBlock: blockNumber, payloadJson });
    return { success: true, message: `Sent ${ack.bytes} bytes: ${ack.detail}`, durationMs: ack.durationMs };
  } catch (e) {
    return { success: false, message: (e as Error).message, durationMs: 0 };
  } finally {
    await destination.close();
  }
}
