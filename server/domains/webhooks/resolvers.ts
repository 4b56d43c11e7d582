import { MASK, maskUrlPassword } from "../../dataplane/engine/config.ts";
import type { Context } from "../../graphql/context.ts";
import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { secretBox } from "../../platform/secrets.ts";
import * as deliveries from "../streams/deliveries.ts";
import { streamState } from "../streams/lifecycle.ts";
import type { StreamsServices } from "../streams/runtime.ts";
import * as streamService from "../streams/service.ts";
import type { StreamRow } from "../streams/store.ts";
import * as service from "./service.ts";

const box = (ctx: Context) => secretBox(ctx.config);

async function views(ctx: Context, accountId: string, rows: StreamRow[]) {
  const progress = await streamService.progressOf(
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
      state: streamState(row),
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

/** What the Webhook type's fields resolve from (the generated types' mapper for Webhook). */
export type WebhookView = Awaited<ReturnType<typeof views>>[number];

const one = async (ctx: Context, accountId: string, row: StreamRow) => (await views(ctx, accountId, [row]))[0];

export const webhookResolvers = (deps: StreamsServices): Resolvers => ({
  Query: {
    webhooks: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await streamService.listStreams(ctx.db, accountId, "WEBHOOK", args);
      return { webhooks: await views(ctx, accountId, page.rows), pageInfo: page.pageInfo, totalCount: page.totalCount };
    }),
    webhook: field("VIEWER", async ({ ctx, accountId, args }) =>
      one(ctx, accountId, await service.ownedWebhook(ctx.db, accountId, args.id)),
    ),
    webhookMetrics: field("VIEWER", ({ ctx, accountId, args }) =>
      service.webhookMetrics(
        ctx.db,
        accountId,
        args.id,
        args.startDate ? new Date(args.startDate) : null,
        args.endDate ? new Date(args.endDate) : null,
      ),
    ),
    webhookLogs: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await streamService.streamLogs(ctx.db, accountId, args.id, "WEBHOOK", args);
      return { logs: page.rows, pageInfo: page.pageInfo };
    }),
    webhookDeliveries: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await deliveries.listDeliveries(ctx.db, accountId, args.id, "WEBHOOK", args);
      return { deliveries: page.rows, pageInfo: page.pageInfo, retentionDays: page.retentionDays };
    }),
    failingWebhooks: field("VIEWER", async ({ ctx, accountId }) =>
      views(ctx, accountId, await deliveries.failingStreams(ctx.db, accountId, "WEBHOOK")),
    ),
    webhookLatestBlock: field("VIEWER", ({ ctx, accountId, args }) =>
      streamService.latestBlock(deps, { db: ctx.db, accountId }, args.network),
    ),
    webhookRawPayload: fieldWithInput(
      "VIEWER",
      { schema: "webhook#/$defs/rawPayloadInput", of: (args) => args },
      ({ ctx, accountId, input }) =>
        service.rawPayload(deps, { db: ctx.db, accountId }, input.network, input.blockNumber),
    ),
  },
  Mutation: {
    createWebhook: fieldWithInput(
      "ADMIN",
      { schema: "webhook#/$defs/createInput" },
      async ({ ctx, accountId, input }) =>
        one(ctx, accountId, await service.createWebhook(ctx.db, box(ctx), deps, accountId, input)),
    ),
    updateWebhook: fieldWithInput(
      "ADMIN",
      { schema: "webhook#/$defs/updateInput" },
      async ({ ctx, accountId, input }) =>
        one(ctx, accountId, await service.updateWebhook(ctx.db, box(ctx), deps, accountId, input)),
    ),
    activateWebhook: fieldWithInput(
      "ADMIN",
      { schema: "webhook#/$defs/activateInput", of: (args) => ({ from: args.from }) },
      async ({ ctx, accountId, args, input }) =>
        one(ctx, accountId, await service.activateWebhook(ctx.db, deps, accountId, args.id, input.from)),
    ),
    pauseWebhook: field("ADMIN", async ({ ctx, accountId, args }) =>
      one(ctx, accountId, await streamService.pauseStream(ctx.db, accountId, args.id, "WEBHOOK")),
    ),
    deleteWebhook: field("ADMIN", ({ ctx, accountId, args }) =>
      streamService.deleteStream(ctx.db, accountId, args.id, "WEBHOOK"),
    ),
    testWebhookUrl: fieldWithInput("ADMIN", { schema: "webhook#/$defs/testDestinationInput" }, ({ accountId, input }) =>
      service.testUrl(deps, accountId, input),
    ),
    sendWebhookPayload: fieldWithInput(
      "ADMIN",
      { schema: "webhook#/$defs/sendPayloadInput" },
      ({ ctx, accountId, input }) =>
        service.sendPayload(ctx.db, box(ctx), deps, accountId, input.id, input.blockNumber),
    ),
    testWebhookFilter: fieldWithInput(
      "ADMIN",
      { schema: "webhook#/$defs/filterTestInput" },
      ({ ctx, accountId, input }) => service.testFilter(deps, { db: ctx.db, accountId }, input),
    ),
  },
});
