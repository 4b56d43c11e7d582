import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { streamsDeliveringTo } from "../streams/service.ts";
import * as service from "./service.ts";

const functionView = (row: service.FunctionRow) => ({ ...row, limits: { timeout: row.timeoutSec } });

const activationView = (row: service.ActivationRow) => ({
  ...row,
  duration: row.durationMs,
  result: row.resultPreview,
});

/** What the Function and FunctionActivation types resolve from (the generated types' mappers). */
export type FunctionView = ReturnType<typeof functionView>;
export type ActivationView = ReturnType<typeof activationView>;

export const functionResolvers: Resolvers = {
  Query: {
    functions: field("VIEWER", async ({ ctx, accountId }) =>
      (await service.listFunctions(ctx.db, accountId)).map(functionView),
    ),
    function: field("VIEWER", async ({ ctx, accountId, args }) =>
      functionView(await service.getFunction(ctx.db, accountId, args.id)),
    ),
    functionHistory: field("VIEWER", async ({ ctx, accountId, args }) =>
      (await service.history(ctx.db, accountId, args.id, args.first)).map(activationView),
    ),
  },
  Mutation: {
    createFunction: fieldWithInput(
      "ADMIN",
      { schema: "function#/$defs/newFunction" },
      async ({ ctx, accountId, input }) => functionView(await service.createFunction(ctx.db, accountId, input)),
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
        const { activation } = await service.activate(ctx.db, accountId, input.id, service.paramsOf(input), {
          source: "CALL",
        });
        return activationView(activation);
      },
    ),
    testFunction: fieldWithInput("ADMIN", { schema: "function#/$defs/testInput" }, async ({ input }) =>
      service.testResult(await service.runCode(input.code, service.paramsOf(input), input.timeoutSec)),
    ),
  },
};
