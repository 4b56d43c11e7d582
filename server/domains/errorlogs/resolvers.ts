import { field, fieldWithInput } from "../../graphql/field.ts";
import type { QueryErrorLogsArgs } from "../../graphql/generated/resolvers.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
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
  calls: r.calls,
  failedCalls: r.failedCalls,
  clientIp: r.clientIp,
  origin: r.origin,
});

/** The query as its schema states it: the window defaults to the day before `to` (or now). */
function query(args: QueryErrorLogsArgs) {
  const to = args.to ? new Date(args.to) : new Date();
  const from = args.from ? new Date(args.from) : new Date(to.getTime() - 86_400_000);
  return {
    endpointExId: args.endpointExId,
    from: from.toISOString(),
    to: to.toISOString(),
    limit: args.limit,
    ...(args.nextAt ? { nextAt: args.nextAt } : {}),
  };
}

export const errorLogResolvers: Resolvers = {
  Query: {
    errorLogs: fieldWithInput(
      "VIEWER",
      { schema: "error-log#/$defs/query", of: query },
      async ({ ctx, accountId, input }) => {
        const page = await service.listErrorLogs(ctx.db, accountId, {
          ...input,
          from: new Date(input.from),
          to: new Date(input.to),
        });
        return {
          logs: page.rows.map(logView),
          nextAt: page.pageInfo.endCursor && page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
          hasMore: page.pageInfo.hasNextPage,
        };
      },
    ),
    errorLogDetails: field("VIEWER", async ({ ctx, accountId, args }) => {
      const row = await service.errorLogDetails(ctx.db, accountId, args.endpointExId, args.requestId);
      return { log: logView(row), request: row.requestBody, response: row.responseBody };
    }),
  },
};
