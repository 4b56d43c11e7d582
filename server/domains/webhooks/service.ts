import type { WebhookCreateInput, WebhookUpdateInput } from "../../../schemas/generated/entities.ts";
import { createDestination, type WebhookAttributes } from "../../dataplane/destinations/index.ts";
import type { Db } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import type { SecretBox } from "../../platform/secrets.ts";
import { bucketSeries } from "../../platform/time-buckets.ts";
import { type StreamsServices, streamsRuntime } from "../streams/runtime.ts";
import * as streamService from "../streams/service.ts";
import type { StreamRow } from "../streams/store.ts";

/**
 * Webhooks: the spec's simpler product on the stream engine. A webhook is a stream of the
 * BLOCK_WITH_RECEIPTS dataset, one block per delivery, to a WEBHOOK destination, with reorgs fixed;
 * it bills in credits (see dataplane/engine/metrics.ts).
 */
export const WEBHOOK_DATASET = "BLOCK_WITH_RECEIPTS";

/** What creating and updating share: every field may be absent on an update. */
type WebhookInput = Omit<WebhookCreateInput, "name" | "network" | "url"> & Partial<WebhookCreateInput>;

function toStreamInput(input: WebhookInput, current?: StreamRow): streamService.StreamInput {
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

export const ownedWebhook = (db: Db, accountId: string, id: string) =>
  streamService.ownedStream(db, accountId, id, "WEBHOOK");

export async function createWebhook(
  db: Db,
  box: SecretBox,
  services: StreamsServices,
  accountId: string,
  input: WebhookCreateInput,
) {
  const row = await streamService.createStream(db, box, accountId, toStreamInput(input), "WEBHOOK", services);
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
  return streamService.updateStream(db, box, accountId, input.id, patch, "WEBHOOK", services);
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
    await streamService.setCheckpoint(
      db,
      accountId,
      current.id,
      await streamService.latestBlock(services, { db, accountId }, current.network),
    );
  return streamService.activateStream(db, accountId, id, "WEBHOOK", services);
}

/**
 * Totals and points of what a webhook processed, delivered and billed in its window (from `start`, or
 * from its first recorded minute without one, to `end`, default now), per point of the window's step.
 */
export async function webhookMetrics(db: Db, accountId: string, id: string, start: Date | null, end: Date | null) {
  const { window, rows } = await streamService.metricBuckets(db, accountId, id, "WEBHOOK", start, end);
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
  who: streamService.ChainReadFor,
  network: string,
  blockNumber: number,
) {
  const batch = await streamService.readBatch(services, who, network, WEBHOOK_DATASET, blockNumber, 1);
  return streamService.payloadResult(JSON.stringify(batch.items));
}

export function testUrl(
  services: StreamsServices,
  accountId: string,
  input: { url: string; compression?: string; securityToken?: string },
) {
  // The schema checked the webhook attributes; `type` names which destination they are for.
  return streamService.testDestination(services, accountId, { ...input, type: "WEBHOOK" } as WebhookAttributes);
}

export function testFilter(
  services: StreamsServices,
  who: streamService.ChainReadFor,
  input: { network: string; blockNumber: number; filterFunction: string },
) {
  return streamService.runFilterOn(services, who, { ...input, dataset: WEBHOOK_DATASET });
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
    const r = await streamService.runFilterOn(
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
    const batch = await streamService.readBatch(
      services,
      { db, accountId },
      row.network,
      WEBHOOK_DATASET,
      blockNumber,
      1,
    );
    payloadJson = JSON.stringify(batch.items);
  }
  if (payloadJson === null)
    return { success: true, message: "The filter skipped this block: nothing was sent.", durationMs: 0 };
  const destination = createDestination(
    streamService.storedAttributes(box, row),
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
