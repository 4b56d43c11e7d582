import { createDestination, type WebhookAttributes } from "../../dataplane/destinations/index.ts";
import { type Context, requirePrincipal, requireRole } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { AppError, notFound } from "../../platform/errors.ts";
import { secretBox } from "../../platform/secrets.ts";
import { validateInput } from "../../platform/validation.ts";
import { streamsRuntime } from "../streams/runtime.ts";
import * as streamService from "../streams/service.ts";
import * as store from "../streams/store.ts";

/**
 * Webhooks: the spec's simpler product on the stream engine. A webhook is a stream of the
 * BLOCK_WITH_RECEIPTS dataset, one block per delivery, to a WEBHOOK destination, with reorgs fixed;
 * it bills in credits (see dataplane/engine/metrics.ts).
 */
export const WEBHOOK_DATASET = "BLOCK_WITH_RECEIPTS";

interface WebhookInput {
  id?: string;
  name?: string;
  network?: string;
  url?: string;
  compression?: string;
  securityToken?: string;
  filterFunction?: string | null;
  startRange?: number;
  notificationEmail?: string | null;
  status?: string;
}

const box = (ctx: Context) => secretBox(ctx.config);

function toStreamInput(input: WebhookInput, current?: store.StreamRow): streamService.StreamInput {
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

async function views(ctx: Context, accountId: string, rows: store.StreamRow[]) {
  const progress = await store.progressOf(
    ctx.db,
    accountId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => {
    const { hasSecrets } = streamService.shownAttributes(row, box(ctx));
    return {
      id: row.id,
      createdAt: row.createdAt,
      name: row.name,
      status: row.status,
      statusReason: row.statusReason,
      network: row.network,
      url: String(row.destinationAttributes.url ?? ""),
      filterFunction: row.filterFunction,
      compression: String(row.destinationAttributes.compression ?? "NONE"),
      securityToken: hasSecrets ? streamService.MASK : null,
      hasSecurityToken: hasSecrets,
      sequence: row.sequence,
      startRange: row.startRange,
      notificationEmail: row.notificationEmail,
      lastDeliveredBlock: progress.get(row.id)?.lastDeliveredBlock ?? null,
    };
  });
}

const one = async (ctx: Context, accountId: string, row: store.StreamRow) => (await views(ctx, accountId, [row]))[0];

async function owned(ctx: Context, accountId: string, id: string) {
  const row = await store.getStream(ctx.db, accountId, id, "WEBHOOK");
  if (!row) throw notFound("Webhook");
  return row;
}

export const webhookResolvers: Resolvers = {
  Query: {
    webhooks: async (_: unknown, args: { first?: number; after?: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      const page = await store.listStreams(ctx.db, accountId, "WEBHOOK", {
        limit: Math.min(Math.max(args.first ?? 20, 1), 100),
        after: args.after,
      });
      return { webhooks: await views(ctx, accountId, page.rows), pageInfo: page.pageInfo, totalCount: page.totalCount };
    },
    webhook: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return one(ctx, accountId, await owned(ctx, accountId, args.id));
    },
    webhookMetrics: async (_: unknown, args: { id: string; startDate: Date; endDate?: Date | null }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      await owned(ctx, accountId, args.id);
      const rows = await store.metricMinutes(
        ctx.db,
        accountId,
        args.id,
        new Date(args.startDate),
        args.endDate ? new Date(args.endDate) : new Date(),
      );
      const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((a, r) => a + f(r), 0);
      return {
        processed: sum((r) => r.blocks),
        delivered: sum((r) => r.delivered),
        bytesTotal: sum((r) => r.bytesBillable),
        credits: sum((r) => r.credits),
        datapoints: rows.map((r) => ({
          timestamp: r.minute,
          processed: r.blocks,
          delivered: r.delivered,
          bytes: r.bytesBillable,
        })),
      };
    },
    webhookLogs: async (
      _: unknown,
      args: { id: string; first?: number; after?: string; searchText?: string },
      ctx: Context,
    ) => {
      const { accountId } = requirePrincipal(ctx);
      await owned(ctx, accountId, args.id);
      return store.logs(ctx.db, accountId, args.id, { ...args, first: Math.min(Math.max(args.first ?? 50, 1), 100) });
    },
    webhookLatestBlock: (_: unknown, args: { network: string }, ctx: Context) => {
      requirePrincipal(ctx);
      return streamService.latestBlock(ctx.services, args.network);
    },
    webhookRawPayload: async (_: unknown, args: { network: string; blockNumber: number }, ctx: Context) => {
      requirePrincipal(ctx);
      const input = validateInput<typeof args>("webhook#/$defs/rawPayloadInput", args);
      const batch = await streamService.readBatch(ctx.services, input.network, WEBHOOK_DATASET, input.blockNumber, 1);
      return streamService.payloadResult(JSON.stringify(batch.items));
    },
  },
  Mutation: {
    createWebhook: async (_: unknown, args: { input: WebhookInput }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<WebhookInput>("webhook#/$defs/createInput", args.input);
      const row = await streamService.createStream(
        ctx.db,
        box(ctx),
        accountId,
        toStreamInput(input),
        "WEBHOOK",
        ctx.services,
      );
      if (row.status === "ACTIVE") streamsRuntime(ctx.services)?.wake();
      return one(ctx, accountId, row);
    },
    updateWebhook: async (_: unknown, args: { input: WebhookInput & { id: string } }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<WebhookInput & { id: string }>("webhook#/$defs/updateInput", args.input);
      const current = await owned(ctx, accountId, input.id);
      const patch = toStreamInput(input, current);
      return one(
        ctx,
        accountId,
        await streamService.updateStream(ctx.db, box(ctx), accountId, input.id, patch, "WEBHOOK", ctx.services),
      );
    },
    activateWebhook: async (_: unknown, args: { id: string; from: "LAST" | "LATEST" }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const { from } = validateInput<{ from: "LAST" | "LATEST" }>("webhook#/$defs/activateInput", { from: args.from });
      const current = await owned(ctx, accountId, args.id);
      // LATEST skips what was missed while paused: delivery starts at the current tip.
      if (from === "LATEST")
        await store.setCheckpoint(
          ctx.db,
          accountId,
          current.id,
          await streamService.latestBlock(ctx.services, current.network),
        );
      return one(
        ctx,
        accountId,
        await streamService.activateStream(ctx.db, accountId, args.id, "WEBHOOK", ctx.services),
      );
    },
    pauseWebhook: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return one(ctx, accountId, await streamService.pauseStream(ctx.db, accountId, args.id, "WEBHOOK"));
    },
    deleteWebhook: (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return streamService.deleteStream(ctx.db, accountId, args.id, "WEBHOOK");
    },
    testWebhookUrl: (
      _: unknown,
      args: { input: { url: string; compression?: string; securityToken?: string } },
      ctx: Context,
    ) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("webhook#/$defs/testDestinationInput", args.input);
      return streamService.testDestination(ctx.services, accountId, {
        ...input,
        type: "WEBHOOK",
      } as WebhookAttributes);
    },
    sendWebhookPayload: async (_: unknown, args: { input: { id: string; blockNumber: number } }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("webhook#/$defs/sendPayloadInput", args.input);
      const row = await owned(ctx, accountId, input.id);
      let payloadJson: string | null;
      if (row.filterFunction) {
        const r = await streamService.runFilterOn(ctx.services, {
          network: row.network,
          dataset: WEBHOOK_DATASET,
          blockNumber: input.blockNumber,
          filterFunction: row.filterFunction,
          filterVersion: row.filterVersion,
        });
        if (r.error) throw new AppError("BAD_USER_INPUT", `The filter failed: ${r.error}`);
        payloadJson = r.result === null ? null : JSON.stringify(r.result);
      } else {
        const batch = await streamService.readBatch(ctx.services, row.network, WEBHOOK_DATASET, input.blockNumber, 1);
        payloadJson = JSON.stringify(batch.items);
      }
      if (payloadJson === null)
        return { success: true, message: "The filter skipped this block: nothing was sent.", durationMs: 0 };
      const destination = createDestination(
        streamService.storedAttributes(box(ctx), row),
        { streamId: row.id, network: row.network, dataset: WEBHOOK_DATASET },
        ctx.services.streams.destinationDeps,
      );
      try {
        const ack = await destination.deliver({
          startBlock: input.blockNumber,
          endBlock: input.blockNumber,
          payloadJson,
        });
        return { success: true, message: `Sent ${ack.bytes} bytes: ${ack.detail}`, durationMs: ack.durationMs };
      } catch (e) {
        return { success: false, message: (e as Error).message, durationMs: 0 };
      } finally {
        await destination.close();
      }
    },
    testWebhookFilter: async (
      _: unknown,
      args: { input: { network: string; blockNumber: number; filterFunction: string } },
      ctx: Context,
    ) => {
      requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("webhook#/$defs/filterTestInput", args.input);
      return streamService.runFilterOn(ctx.services, { ...input, dataset: WEBHOOK_DATASET });
    },
  },
};
