import type { Context } from "../../graphql/context.ts";
import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { secretBox } from "../../platform/secrets.ts";
import type { StreamsServices } from "../streams/runtime.ts";
import * as service from "./service.ts";
import type { WebhookRow } from "./store.ts";

const box = (ctx: Context) => secretBox(ctx.config);

const views = (ctx: Context, accountId: string, rows: WebhookRow[]) =>
  service.shownWebhooks(ctx.db, box(ctx), accountId, rows);

/** What the Webhook type's fields resolve from (the generated types' mapper for Webhook). */
export type WebhookView = Awaited<ReturnType<typeof service.shownWebhooks>>[number];

const one = async (ctx: Context, accountId: string, row: WebhookRow) => (await views(ctx, accountId, [row]))[0];

export const webhookResolvers = (deps: StreamsServices): Resolvers => ({
  Query: {
    webhooks: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await service.listWebhooks(ctx.db, accountId, args);
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
      const page = await service.webhookLogs(ctx.db, accountId, args.id, args);
      return { logs: page.rows, pageInfo: page.pageInfo };
    }),
    webhookDeliveries: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await service.webhookDeliveries(ctx.db, accountId, args.id, args);
      return { deliveries: page.rows, pageInfo: page.pageInfo, retentionDays: page.retentionDays };
    }),
    failingWebhooks: field("VIEWER", async ({ ctx, accountId }) =>
      views(ctx, accountId, await service.failingWebhooks(ctx.db, accountId)),
    ),
    webhookLatestBlock: field("VIEWER", ({ ctx, accountId, args }) =>
      service.latestBlock(deps, { db: ctx.db, accountId }, args.network),
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
      one(ctx, accountId, await service.pauseWebhook(ctx.db, accountId, args.id)),
    ),
    deleteWebhook: field("ADMIN", ({ ctx, accountId, args }) => service.deleteWebhook(ctx.db, accountId, args.id)),
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
