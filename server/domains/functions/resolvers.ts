import type { Context } from "../../graphql/context.ts";
import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { badInput, forbidden } from "../../platform/errors.ts";
import { publicBaseUrl } from "../../platform/http-headers.ts";
import { featureFlags, getAccountOrFail, planPriceCents } from "../account/service.ts";
import { streamPermissions } from "../streams/permissions.ts";
import type { StreamPermissionsView } from "../streams/resolvers.ts";
import type { StreamsServices } from "../streams/runtime.ts";
import { blockPayload, streamsDeliveringTo } from "../streams/service.ts";
import { callPath } from "./http.ts";
import { functionLimitsOf, memorySizesOf, type PlanFunctionLimits } from "./limits.ts";
import * as service from "./service.ts";
import { createQuickFunction, FUNCTION_TEMPLATES } from "./templates.ts";

const functionView = (row: service.FunctionRow) => ({
  ...row,
  limits: { timeout: row.timeoutSec, memory: row.memoryMb },
});

const activationView = (row: service.ActivationRow) => ({
  ...row,
  activationSource: row.activationSource as (typeof service.ACTIVATION_SOURCES)[number],
  duration: row.durationMs,
  memory: service.usedMb(row.memoryUsedBytes),
  memoryLimit: row.memoryMb,
  billable: row.billableGbSeconds,
  result: row.resultPreview,
});

const logView = (row: service.LogLineRow) => ({
  id: `${row.activationId}:${row.line}`,
  activationId: row.activationId,
  createdAt: row.createdAt,
  level: row.level as (typeof service.LOG_LEVELS)[number],
  message: row.message,
});

/** The networks and datasets a call may read a block from are the streams' own; the memory sizes and longest time limit, the plan's. */
const permissionsView = (streams: StreamPermissionsView, limits: PlanFunctionLimits) => ({
  languages: service.languageOptions(),
  memorySizes: memorySizesOf(limits),
  maxTimeoutSec: limits.maxTimeoutSec,
  chainConfigs: streams.chainConfigs,
});

/** What the Function, FunctionActivation and FunctionPermissions types resolve from (the generated types' mappers). */
export type FunctionView = ReturnType<typeof functionView>;
export type ActivationView = ReturnType<typeof activationView>;
export type FunctionPermissionsView = ReturnType<typeof permissionsView>;

/** The base of the function's HTTP address: PUBLIC_URL, or the address this request came to. */

/** Quick functions are behind the account's `quickfunctions` flag. */
async function requireQuickFunctions(ctx: Context, accountId: string): Promise<void> {
  const flags = featureFlags(ctx.config, await getAccountOrFail(ctx.db, accountId));
  if (!flags.quickfunctions) throw forbidden("Quick functions are not enabled for this account.");
}

/** What the functions API needs of the running service: the streams runtime (blocks to run on) and the process's function runs. */
export interface FunctionsApiDeps extends StreamsServices {
  runs: service.FunctionRuns;
}

export const functionResolvers = (deps: FunctionsApiDeps): Resolvers => ({
  Function: {
    callUrl: (parent, _args, ctx) => `${publicBaseUrl(ctx.config, ctx.request)}${callPath(parent.id)}`,
  },
  Query: {
    functions: field("VIEWER", async ({ ctx, accountId }) =>
      (await service.listFunctions(ctx.db, accountId)).map(functionView),
    ),
    functionsOverview: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await service.functionsPage(ctx.db, accountId, { after: args.after, limit: args.limit });
      return { ...page, edges: page.edges.map((e) => ({ cursor: e.cursor, node: functionView(e.node) })) };
    }),
    function: field("VIEWER", async ({ ctx, accountId, args }) =>
      functionView(await service.getFunction(ctx.db, accountId, args.id)),
    ),
    functionSettings: field("VIEWER", async ({ ctx, accountId, args }) =>
      functionView(await service.getFunction(ctx.db, accountId, args.id)),
    ),
    functionVersions: field("VIEWER", ({ ctx, accountId, args }) => service.versions(ctx.db, accountId, args.id)),
    functionHistory: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await service.history(ctx.db, accountId, args.id, args);
      return { ...page, edges: page.edges.map((e) => ({ cursor: e.cursor, node: activationView(e.node) })) };
    }),
    functionActivation: field("VIEWER", async ({ ctx, accountId, args }) =>
      activationView(await service.getActivation(ctx.db, accountId, args.id)),
    ),
    functionActivationResult: field("VIEWER", ({ ctx, accountId, args }) =>
      service.activationResult(ctx.db, accountId, args.id),
    ),
    functionLogs: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await service.logs(ctx.db, accountId, args.id, args);
      return { ...page, edges: page.edges.map((e) => ({ cursor: e.cursor, node: logView(e.node) })) };
    }),
    // A DateTime a document gives as a variable's default arrives as its text: both are read with new Date.
    functionMetrics: field("VIEWER", ({ ctx, accountId, args }) =>
      service.metrics(
        ctx.db,
        accountId,
        args.id,
        new Date(args.startDate),
        args.endDate ? new Date(args.endDate) : null,
      ),
    ),
    functionsPlan: field("VIEWER", ({ ctx, accountId }) => service.functionsPlan(ctx.db, accountId)),
    functionPermissions: field("VIEWER", async ({ ctx, accountId }) =>
      permissionsView(
        await streamPermissions(deps, await planPriceCents(ctx.db, accountId)),
        await functionLimitsOf(ctx.db, accountId),
      ),
    ),
    functionTemplates: field("VIEWER", async ({ ctx, accountId }) => {
      await requireQuickFunctions(ctx, accountId);
      return [...FUNCTION_TEMPLATES];
    }),
    functionsBillingUsage: field("VIEWER", ({ ctx, accountId, args }) =>
      service.billingUsage(
        ctx.db,
        accountId,
        new Date(args.start),
        new Date(args.end),
        args.tick === "HOUR" ? "hour" : "day",
      ),
    ),
  },
  Mutation: {
    createFunction: fieldWithInput(
      "ADMIN",
      { schema: "function#/$defs/newFunction" },
      async ({ ctx, accountId, input }) => functionView(await service.createFunction(ctx.db, accountId, input)),
    ),
    createQuickFunction: fieldWithInput(
      "ADMIN",
      { schema: "function#/$defs/quickInput" },
      async ({ ctx, accountId, input }) => {
        await requireQuickFunctions(ctx, accountId);
        return functionView(await createQuickFunction(ctx.db, accountId, input));
      },
    ),
    updateFunction: fieldWithInput(
      "ADMIN",
      { schema: "function#/$defs/updateInput" },
      async ({ ctx, accountId, input }) => {
        const { id, ...patch } = input;
        return functionView(await service.updateFunction(ctx.db, accountId, id, patch));
      },
    ),
    deleteFunction: field("ADMIN", ({ ctx, accountId, args }) =>
      service.deleteFunction(ctx.db, accountId, args.id, (account, fn) => streamsDeliveringTo(ctx.db, account, fn)),
    ),
    callFunction: fieldWithInput(
      "ADMIN",
      { schema: "function#/$defs/callInput" },
      async ({ ctx, accountId, input }) => {
        await service.getFunction(ctx.db, accountId, input.id);
        const params = service.paramsOf(input);
        const block = service.callBlock(input);
        if (block && (params.data !== null || params.metadata !== undefined))
          throw badInput([{ pointer: "/params", message: "Give params or a block to read them from, not both." }]);
        const { activation } = await service.activate(
          ctx.db,
          deps.runs,
          accountId,
          input.id,
          block
            ? { ...(await blockPayload(deps, { db: ctx.db, accountId }, block)), user_data: params.user_data }
            : params,
          { source: "CALL", ...block },
        );
        return activationView(activation);
      },
    ),
    testFunction: fieldWithInput("ADMIN", { schema: "function#/$defs/testInput" }, async ({ ctx, accountId, input }) =>
      service.testResult(
        await service.runUnsavedCode(
          ctx.db,
          deps.runs,
          accountId,
          input.code,
          service.paramsOf(input),
          { timeoutSec: input.timeoutSec, memoryMb: input.memoryMb },
          deps.streams.filterHelpers(accountId),
        ),
      ),
    ),
  },
});
