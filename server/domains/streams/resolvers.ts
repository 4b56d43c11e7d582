import DataLoader from "dataloader";
import type { DestinationAttributes } from "../../dataplane/destinations/index.ts";
import { type Context, loaderOf, requireRole } from "../../graphql/context.ts";
import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { AppError } from "../../platform/errors.ts";
import { listOutbox } from "../../platform/mail.ts";
import { secretBox } from "../../platform/secrets.ts";
import { planPriceCents } from "../account/service.ts";
import * as deliveries from "./deliveries.ts";
import { streamState } from "./lifecycle.ts";
import { streamPermissions } from "./permissions.ts";
import { type StreamsServices, streamsRuntime } from "./runtime.ts";
import * as service from "./service.ts";
import type * as store from "./store.ts";

const box = (ctx: Context) => secretBox(ctx.config);

async function streamViews(ctx: Context, accountId: string, rows: store.StreamRow[]) {
  const progress = await service.progressOf(
    ctx.db,
    accountId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => {
    const { attributes, hasSecrets } = service.shownAttributes(row, box(ctx));
    const { destinationSecrets: _sealed, accountId: _account, ...rest } = row;
    return {
      ...rest,
      state: streamState(row),
      destinationAttributes: attributes,
      hasSecrets,
      nextBlock: progress.get(row.id)?.nextBlock ?? null,
      lastDeliveredBlock: progress.get(row.id)?.lastDeliveredBlock ?? null,
    };
  });
}

/** What the Stream type's fields resolve from (the generated types' mapper for Stream). */
export type StreamView = Awaited<ReturnType<typeof streamViews>>[number];

/** Function names by id for the streams of one request (a list's rows ask one by one). */
const destinationFunctionNames = (deps: StreamsServices) => (ctx: Context) =>
  new DataLoader<string, string | null>(async (ids) => {
    const accountId = requireRole(ctx, "VIEWER").accountId;
    const names = await streamsRuntime(deps).functions.names(ctx.db, accountId, [...ids]);
    return ids.map((id) => names.get(id) ?? null);
  });

async function oneView(ctx: Context, accountId: string, row: store.StreamRow) {
  return (await streamViews(ctx, accountId, [row]))[0];
}

/** What the StreamLog, FilterTemplate, StreamTemplate and StreamPermissions types resolve from. */
export type StreamLogView = store.StreamLogRow;
export type StreamDeliveryView = store.StreamDeliveryRow;
export type FilterTemplateView = ReturnType<typeof service.filterTemplates>[number];
export type StreamTemplateView = Awaited<ReturnType<typeof service.streamTemplates>>[number];
export type StreamPermissionsView = Awaited<ReturnType<typeof streamPermissions>>;

type TestDestinationRef =
  | "webhookAttributes"
  | "postgresAttributes"
  | "s3Attributes"
  | "azureAttributes"
  | "snowflakeAttributes"
  | "functionAttributes";

/** The test…Destination mutations: their input is the attributes of that destination type. */
const testDestination = (deps: StreamsServices, type: DestinationAttributes["type"], ref: TestDestinationRef) =>
  fieldWithInput("ADMIN", { schema: `stream#/$defs/${ref}` }, ({ accountId, input }) =>
    // The schema checked the attributes of this type; the destination union is keyed by `type`.
    service.testDestination(deps, accountId, { ...input, type } as DestinationAttributes),
  );

const payloadInput = { schema: "stream#/$defs/payloadInput", of: (args: unknown) => args } as const;

/** The blocks a payload preview names, read for the account (its plan decides the networks it may read). */
const previewBatch = (
  deps: StreamsServices,
  ctx: Context,
  accountId: string,
  input: { network: string; dataset: string; blockNumber: number },
  batchSize: number,
) => service.readBatch(deps, { db: ctx.db, accountId }, input.network, input.dataset, input.blockNumber, batchSize);

export const streamResolvers = (deps: StreamsServices): Resolvers => {
  // One loader factory per service: loaderOf keeps a request's loaders by the function that made them.
  const functionNames = destinationFunctionNames(deps);
  return {
    Stream: {
      destinationFunctionName: field("VIEWER", ({ ctx, parent }) => {
        const functionId = parent.destination === "FUNCTION" ? parent.destinationAttributes.functionID : undefined;
        return typeof functionId === "string" ? loaderOf(ctx, functionNames).load(functionId) : null;
      }),
    },
    Query: {
      streams: field("VIEWER", async ({ ctx, accountId, args }) => {
        const page = await service.listStreams(
          ctx.db,
          accountId,
          "STREAM",
          { first: args.limit, after: args.after, search: args.search },
          "limit",
        );
        return {
          streams: await streamViews(ctx, accountId, page.rows),
          pageInfo: page.pageInfo,
          totalCount: page.totalCount,
        };
      }),
      stream: field("VIEWER", async ({ ctx, accountId, args }) =>
        oneView(ctx, accountId, await service.ownedStream(ctx.db, accountId, args.id, "STREAM")),
      ),
      streamDeliveries: field("VIEWER", async ({ ctx, accountId, args }) => {
        const page = await deliveries.listDeliveries(ctx.db, accountId, args.id, "STREAM", args);
        return { deliveries: page.rows, pageInfo: page.pageInfo, retentionDays: page.retentionDays };
      }),
      failingStreams: field("VIEWER", async ({ ctx, accountId }) =>
        streamViews(ctx, accountId, await deliveries.failingStreams(ctx.db, accountId, "STREAM")),
      ),
      streamMetrics: field("VIEWER", async ({ ctx, accountId, args }) => {
        const { window, rows } = await service.metricBuckets(
          ctx.db,
          accountId,
          args.id,
          "STREAM",
          args.startDate ? new Date(args.startDate) : null,
          args.endDate ? new Date(args.endDate) : null,
        );
        return service.buildMetrics(window, rows);
      }),
      streamLogs: field("VIEWER", async ({ ctx, accountId, args }) => {
        const page = await service.streamLogs(ctx.db, accountId, args.id, "STREAM", args);
        return { logs: page.rows, pageInfo: page.pageInfo };
      }),
      streamRawPayload: fieldWithInput("VIEWER", payloadInput, async ({ ctx, accountId, input }) => {
        const batch = await previewBatch(deps, ctx, accountId, input, input.batchSize ?? 1);
        return service.payloadResult(JSON.stringify(batch.items));
      }),
      streamDatasetData: fieldWithInput("VIEWER", payloadInput, async ({ ctx, accountId, input }) => {
        const batch = await previewBatch(deps, ctx, accountId, input, 1);
        return service.payloadResult(JSON.stringify(batch.items[0]));
      }),
      streamFinalPayload: fieldWithInput("VIEWER", payloadInput, async ({ ctx, accountId, input }) => {
        if (!input.filterFunction) {
          const batch = await previewBatch(deps, ctx, accountId, input, input.batchSize ?? 1);
          return service.payloadResult(JSON.stringify(batch.items));
        }
        const r = await service.runFilterOn(
          deps,
          { db: ctx.db, accountId },
          { ...input, filterFunction: input.filterFunction },
        );
        if (r.error) throw new AppError("BAD_USER_INPUT", `The filter failed: ${r.error}`);
        return service.payloadResult(r.result === null ? null : JSON.stringify(r.result));
      }),
      streamFilterTemplates: field("VIEWER", ({ args }) => service.filterTemplates(args.network)),
      streamTemplates: field("VIEWER", async ({ ctx, accountId }) =>
        service.streamTemplates(deps, await planPriceCents(ctx.db, accountId)),
      ),
      quickstreamsCount: field("VIEWER", ({ ctx, accountId }) => service.countStreams(ctx.db, accountId, "STREAM")),
      streamLatestBlock: field("VIEWER", ({ ctx, accountId, args }) =>
        service.latestBlock(deps, { db: ctx.db, accountId }, args.network),
      ),
      streamPermissions: field("VIEWER", async ({ ctx, accountId }) =>
        streamPermissions(deps, await planPriceCents(ctx.db, accountId)),
      ),
      notificationOutbox: field("VIEWER", async ({ ctx, accountId }) => ({
        emailConnected: streamsRuntime(deps)?.mailer?.connected ?? false,
        notifications: await listOutbox(ctx.db, accountId),
      })),
    },
    Mutation: {
      createStream: fieldWithInput(
        "ADMIN",
        { schema: "stream#/$defs/createInput" },
        async ({ ctx, accountId, input }) => {
          const row = await service.createStream(ctx.db, box(ctx), accountId, input, "STREAM", deps);
          if (row.status === "ACTIVE") streamsRuntime(deps)?.wake();
          return oneView(ctx, accountId, row);
        },
      ),
      updateStream: fieldWithInput(
        "ADMIN",
        { schema: "stream#/$defs/updateInput" },
        async ({ ctx, accountId, input }) => {
          const { id, ...patch } = input;
          return oneView(
            ctx,
            accountId,
            await service.updateStream(ctx.db, box(ctx), accountId, id, patch, "STREAM", deps),
          );
        },
      ),
      activateStream: field("ADMIN", async ({ ctx, accountId, args }) =>
        oneView(ctx, accountId, await service.activateStream(ctx.db, accountId, args.id, "STREAM", deps)),
      ),
      pauseStream: field("ADMIN", async ({ ctx, accountId, args }) => {
        await service.ownedStream(ctx.db, accountId, args.id, "STREAM");
        return oneView(ctx, accountId, await service.pauseStream(ctx.db, accountId, args.id, "STREAM"));
      }),
      migrateStream: fieldWithInput(
        "ADMIN",
        { schema: "stream#/$defs/migrateInput", of: (args) => ({ region: args.region }) },
        async ({ ctx, accountId, args, input }) =>
          oneView(ctx, accountId, await service.migrateStream(ctx.db, accountId, args.id, input.region)),
      ),
      deleteStream: field("ADMIN", ({ ctx, accountId, args }) =>
        service.deleteStream(ctx.db, accountId, args.id, "STREAM"),
      ),
      checkConnection: fieldWithInput(
        "ADMIN",
        { schema: "stream#/$defs/checkConnectionInput" },
        ({ accountId, input }) =>
          service.testDestination(
            deps,
            accountId,
            // The schema checked the attributes against the destination type named beside them.
            { ...input.destinationAttributes, type: input.destination } as DestinationAttributes,
            input,
          ),
      ),
      testWebhookDestination: testDestination(deps, "WEBHOOK", "webhookAttributes"),
      testPostgresDestination: testDestination(deps, "POSTGRES", "postgresAttributes"),
      testS3Destination: testDestination(deps, "S3", "s3Attributes"),
      testAzureDestination: testDestination(deps, "AZURE", "azureAttributes"),
      testSnowflakeDestination: testDestination(deps, "SNOWFLAKE", "snowflakeAttributes"),
      testFunctionDestination: testDestination(deps, "FUNCTION", "functionAttributes"),
      createStreamWithFunction: fieldWithInput(
        "ADMIN",
        { schema: "stream#/$defs/createWithFunctionInput" },
        async ({ ctx, accountId, input }) =>
          oneView(ctx, accountId, await service.createStreamWithFunction(ctx.db, box(ctx), accountId, input, deps)),
      ),
      testNewFunctionForStream: fieldWithInput(
        "ADMIN",
        { schema: "stream#/$defs/newFunctionTestInput" },
        ({ ctx, accountId, input }) => service.runNewFunctionOn(ctx.db, deps, accountId, input),
      ),
      testFilterFunction: fieldWithInput(
        "ADMIN",
        { schema: "stream#/$defs/filterTestInput" },
        ({ ctx, accountId, input }) =>
          // A null filter function is run as an empty one: it fails like any filter without main.
          service.runFilterOn(
            deps,
            { db: ctx.db, accountId },
            { ...input, filterFunction: input.filterFunction ?? "" },
          ),
      ),
    },
  };
};
