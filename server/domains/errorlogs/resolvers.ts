import { type Context, requirePrincipal } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { validateInput } from "../../platform/validation.ts";
import * as service from "./service.ts";
import type { ErrorLogRow } from "./store.ts";

const logView = (r: Omit<ErrorLogRow, "requestBody" | "responseBody">) => ({
  timestamp: r.at,
  account: r.accountId,
  endpoint: r.endpointId,
  method: r.method,
  httpMethod: r.httpMethod,
  status: r.status,
  url: r.url,
  network: r.network,
  errorCode: r.errorCode,
  errorKind: r.errorKind,
  message: r.message,
  requestId: r.requestId,
});

interface ListArgs {
  endpointExId: string;
  from?: Date | null;
  to?: Date | null;
  limit: number;
  nextAt?: string | null;
}

export const errorLogResolvers: Resolvers = {
  Query: {
    errorLogs: async (_: unknown, args: ListArgs, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      const to = args.to ? new Date(args.to) : new Date();
      const from = args.from ? new Date(args.from) : new Date(to.getTime() - 86_400_000);
      validateInput("error-log#/$defs/query", {
        endpointExId: args.endpointExId,
        from: from.toISOString(),
        to: to.toISOString(),
        limit: args.limit,
        ...(args.nextAt ? { nextAt: args.nextAt } : {}),
      });
      const page = await service.listErrorLogs(ctx.db, accountId, {
        ...args,
        from,
        to,
      });
      return { logs: page.logs.map(logView), nextAt: page.nextAt, hasMore: page.nextAt !== null };
    },
    errorLogDetails: async (_: unknown, args: { endpointExId: string; requestId: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      const row = await service.errorLogDetails(ctx.db, accountId, args.endpointExId, args.requestId);
      return { log: logView(row), request: row.requestBody, response: row.responseBody };
    },
  },
};
