import { type Context, requirePrincipal, requireRole } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { validateInput } from "../../platform/validation.ts";
import { streamsDeliveringTo } from "../streams/store.ts";
import * as service from "./service.ts";

const functionView = (row: service.FunctionRow) => ({ ...row, limits: { timeout: row.timeoutSec } });

const activationView = (row: service.ActivationRow) => ({
  ...row,
  duration: row.durationMs,
  result: row.resultPreview,
});

export const functionResolvers: Resolvers = {
  Query: {
    functions: async (_: unknown, __: unknown, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return (await service.listFunctions(ctx.db, accountId)).map(functionView);
    },
    function: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return functionView(await service.getFunction(ctx.db, accountId, args.id));
    },
    functionHistory: async (_: unknown, args: { id: string; first?: number }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      const limit = Math.min(Math.max(args.first ?? 20, 1), 100);
      return (await service.history(ctx.db, accountId, args.id, limit)).map(activationView);
    },
  },
  Mutation: {
    createFunction: async (_: unknown, args: { input: service.NewFunction }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<service.NewFunction>("function#/$defs/newFunction", args.input);
      return functionView(await service.createFunction(ctx.db, accountId, input));
    },
    updateFunction: async (_: unknown, args: { input: service.FunctionInput & { id: string } }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const { id, ...patch } = validateInput<service.FunctionInput & { id: string }>(
        "function#/$defs/updateInput",
        args.input,
      );
      return functionView(await service.updateFunction(ctx.db, accountId, id, patch));
    },
    deleteFunction: (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return service.deleteFunction(ctx.db, accountId, args.id, (account, fn) =>
        streamsDeliveringTo(ctx.db, account, fn),
      );
    },
    callFunction: async (_: unknown, args: { input: service.ParamsInput & { id: string } }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("function#/$defs/callInput", args.input);
      const { activation } = await service.activate(ctx.db, accountId, input.id, service.paramsOf(input), {
        source: "CALL",
      });
      return activationView(activation);
    },
    testFunction: async (
      _: unknown,
      args: { input: service.ParamsInput & { code: string; timeoutSec?: number } },
      ctx: Context,
    ) => {
      requireRole(ctx, "ADMIN");
      const input = validateInput<typeof args.input>("function#/$defs/testInput", args.input);
      return service.testResult(await service.runCode(input.code, service.paramsOf(input), input.timeoutSec));
    },
  },
};
