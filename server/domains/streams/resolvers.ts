import type { DestinationAttributes } from "../../dataplane/destinations/index.ts";
import { type Context, requirePrincipal, requireRole } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { AppError, notFound } from "../../platform/errors.ts";
import { listOutbox } from "../../platform/mail.ts";
import { secretBox } from "../../platform/secrets.ts";
import { validateInput } from "../../platform/validation.ts";
import { getSubscription } from "../account/store.ts";
import { streamPermissions } from "./permissions.ts";
import { streamsRuntime } from "./runtime.ts";
import * as service from "./service.ts";
import * as store from "./store.ts";

const box = (ctx: Context) => secretBox(ctx.config);
const pageSize = (n: number | null | undefined, dflt = 20) => Math.min(Math.max(n ?? dflt, 1), 100);

async function streamViews(ctx: Context, accountId: string, rows: store.StreamRow[]) {
  const progress = await store.progressOf(
    ctx.db,
    accountId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => {
    const { attributes, hasSecrets } = service.shownAttributes(row, box(ctx));
    const { destinationSecrets: _sealed, accountId: _account, ...rest } = row;
    return {
      ...rest,
      destinationAttributes: attributes,
      hasSecrets,
      nextBlock: progress.get(row.id)?.nextBlock ?? null,
      lastDeliveredBlock: progress.get(row.id)?.lastDeliveredBlock ?? null,
    };
  });
}

async function oneView(ctx: Context, accountId: string, row: store.StreamRow) {
  return (await streamViews(ctx, accountId, [row]))[0];
}

async function owned(ctx: Context, accountId: string, id: string) {
  const row = await store.getStream(ctx.db, accountId, id, "STREAM");
  if (!row) throw notFound("Stream");
  return row;
}

/** The input of test…Destination mutations: the attributes of that destination type. */
function testInput(type: DestinationAttributes["type"], ref: string) {
  return async (_: unknown, args: { input: Record<string, unknown> }, ctx: Context) => {
    const { accountId } = requireRole(ctx, "ADMIN");
    const attrs = validateInput<Record<string, unknown>>(`stream#/$defs/${ref}`, args.input);
    return service.testDestination(ctx.services, accountId, { ...attrs, type } as unknown as DestinationAttributes);
  };
}

export const streamResolvers: Resolvers = {
  Query: {
    streams: async (_: unknown, args: { limit?: number; after?: string; search?: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      const page = await store.listStreams(ctx.db, accountId, "STREAM", {
        limit: pageSize(args.limit),
        after: args.after,
        search: args.search,
      });
      return {
        streams: await streamViews(ctx, accountId, page.rows),
        pageInfo: page.pageInfo,
        totalCount: page.totalCount,
      };
    },
    stream: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return oneView(ctx, accountId, await owned(ctx, accountId, args.id));
    },
    streamMetrics: async (_: unknown, args: { id: string; startDate: Date; endDate?: Date | null }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      await owned(ctx, accountId, args.id);
      const to = args.endDate ? new Date(args.endDate) : new Date();
      const from = new Date(args.startDate);
      return service.buildMetrics(await store.metricMinutes(ctx.db, accountId, args.id, from, to), from, to);
    },
    streamLogs: async (
      _: unknown,
      args: { id: string; first?: number; after?: string; levels?: string[]; searchText?: string },
      ctx: Context,
    ) => {
      const { accountId } = requirePrincipal(ctx);
      await owned(ctx, accountId, args.id);
      return store.logs(ctx.db, accountId, args.id, { ...args, first: pageSize(args.first, 50) });
    },
    streamRawPayload: async (
      _: unknown,
      args: { network: string; dataset: string; blockNumber: number; batchSize?: number },
      ctx: Context,
    ) => {
      requirePrincipal(ctx);
      const input = validateInput<typeof args>("stream#/$defs/payloadInput", args);
      const batch = await service.readBatch(
        ctx.services,
        input.network,
        input.dataset,
        input.blockNumber,
        input.batchSize ?? 1,
      );
      return service.payloadResult(JSON.stringify(batch.items));
    },
    streamDatasetData: async (
      _: unknown,
      args: { network: string; dataset: string; blockNumber: number },
      ctx: Context,
    ) => {
      requirePrincipal(ctx);
      const input = validateInput<typeof args>("stream#/$defs/payloadInput", args);
      const batch = await service.readBatch(ctx.services, input.network, input.dataset, input.blockNumber, 1);
      return service.payloadResult(JSON.stringify(batch.items[0]));
    },
    streamFinalPayload: async (
      _: unknown,
      args: {
        network: string;
        dataset: string;
        blockNumber: number;
        batchSize: number;
        filterFunction?: string | null;
        filterVersion?: string;
      },
      ctx: Context,
    ) => {
      requirePrincipal(ctx);
      const input = validateInput<typeof args>("stream#/$defs/payloadInput", args);
      if (!input.filterFunction) {
        const batch = await service.readBatch(
          ctx.services,
          input.network,
          input.dataset,
          input.blockNumber,
          input.batchSize,
        );
        return service.payloadResult(JSON.stringify(batch.items));
      }
      const r = await service.runFilterOn(ctx.services, { ...input, filterFunction: input.filterFunction });
      if (r.error) throw new AppError("BAD_USER_INPUT", `The filter failed: ${r.error}`);
      return service.payloadResult(r.result === null ? null : JSON.stringify(r.result));
    },
    streamFilterTemplates: (_: unknown, args: { network: string }, ctx: Context) => {
      requirePrincipal(ctx);
      return service.filterTemplates(args.network);
    },
    streamTemplates: async (_: unknown, __: unknown, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      const subscription = await getSubscription(ctx.db, accountId);
      return service.streamTemplates(ctx.services, subscription?.plan.priceCents ?? 0);
    },
    quickstreamsCount: (_: unknown, __: unknown, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return store.countStreams(ctx.db, accountId, "STREAM");
    },
    streamLatestBlock: (_: unknown, args: { network: string }, ctx: Context) => {
      requirePrincipal(ctx);
      return service.latestBlock(ctx.services, args.network);
    },
    streamPermissions: async (_: unknown, __: unknown, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      const subscription = await getSubscription(ctx.db, accountId);
      return streamPermissions(ctx.services, subscription?.plan.priceCents ?? 0);
    },
    notificationOutbox: async (_: unknown, __: unknown, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return {
        emailConnected: streamsRuntime(ctx.services)?.mailer?.connected ?? false,
        notifications: await listOutbox(ctx.db, accountId),
      };
    },
  },
  Mutation: {
    createStream: async (_: unknown, args: { input: service.StreamInput }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<service.StreamInput>("stream#/$defs/createInput", args.input);
      const row = await service.createStream(ctx.db, box(ctx), accountId, input, "STREAM", ctx.services);
      if (row.status === "ACTIVE") streamsRuntime(ctx.services)?.wake();
      return oneView(ctx, accountId, row);
    },
    updateStream: async (_: unknown, args: { input: service.StreamInput & { id: string } }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const { id, ...patch } = validateInput<service.StreamInput & { id: string }>(
        "stream#/$defs/updateInput",
        args.input,
      );
      return oneView(
        ctx,
        accountId,
        await service.updateStream(ctx.db, box(ctx), accountId, id, patch, "STREAM", ctx.services),
      );
    },
    activateStream: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return oneView(ctx, accountId, await service.activateStream(ctx.db, accountId, args.id, "STREAM", ctx.services));
    },
    pauseStream: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      await owned(ctx, accountId, args.id);
      return oneView(ctx, accountId, await service.pauseStream(ctx.db, accountId, args.id, "STREAM"));
    },
    migrateStream: async (_: unknown, args: { id: string; region: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const { region } = validateInput<{ region: string }>("stream#/$defs/migrateInput", { region: args.region });
      return oneView(ctx, accountId, await service.migrateStream(ctx.db, accountId, args.id, region));
    },
    deleteStream: (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return service.deleteStream(ctx.db, accountId, args.id, "STREAM");
    },
    checkConnection: async (
      _: unknown,
      args: {
        input: {
          destination: string;
          destinationAttributes: Record<string, unknown>;
          network?: string;
          dataset?: string;
        };
      },
      ctx: Context,
    ) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("stream#/$defs/checkConnectionInput", args.input);
      return service.testDestination(
        ctx.services,
        accountId,
        { ...input.destinationAttributes, type: input.destination } as unknown as DestinationAttributes,
        input,
      );
    },
    testWebhookDestination: testInput("WEBHOOK", "webhookAttributes"),
    testPostgresDestination: testInput("POSTGRES", "postgresAttributes"),
    testS3Destination: testInput("S3", "s3Attributes"),
    testAzureDestination: testInput("AZURE", "azureAttributes"),
    testSnowflakeDestination: testInput("SNOWFLAKE", "snowflakeAttributes"),
    testFunctionDestination: testInput("FUNCTION", "functionAttributes"),
    createStreamWithFunction: async (
      _: unknown,
      args: { input: Parameters<typeof service.createStreamWithFunction>[3] },
      ctx: Context,
    ) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("stream#/$defs/createWithFunctionInput", args.input);
      const row = await service.createStreamWithFunction(ctx.db, box(ctx), accountId, input, ctx.services);
      return oneView(ctx, accountId, row);
    },
    testNewFunctionForStream: async (
      _: unknown,
      args: { input: Parameters<typeof service.runNewFunctionOn>[1] },
      ctx: Context,
    ) => {
      requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("stream#/$defs/newFunctionTestInput", args.input);
      return service.runNewFunctionOn(ctx.services, input);
    },
    testFilterFunction: async (
      _: unknown,
      args: {
        input: {
          network: string;
          dataset: string;
          blockNumber: number;
          batchSize?: number;
          filterFunction: string;
          filterVersion?: string;
        };
      },
      ctx: Context,
    ) => {
      requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("stream#/$defs/filterTestInput", args.input);
      return service.runFilterOn(ctx.services, input);
    },
  },
};
