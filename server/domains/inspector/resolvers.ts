import type { Context } from "../../graphql/context.ts";
import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { publicBaseUrl } from "../../platform/http-headers.ts";
import * as service from "./service.ts";
import type { InspectedRequestRow, InspectionUrlRow } from "./store.ts";

/** Inspection URLs as the API shows them: the URL from the service's public address, the requests kept. */
async function views(ctx: Context, accountId: string, rows: InspectionUrlRow[]) {
  const counts = await service.keptCounts(
    ctx.db,
    accountId,
    rows.map((r) => r.id),
  );
  const base = publicBaseUrl(ctx.config, ctx.request);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    url: `${base}${service.INSPECT_PREFIX}${r.token}`,
    answerStatus: r.answerStatus,
    createdAt: r.createdAt,
    requestCount: counts.get(r.id) ?? 0,
  }));
}

const one = async (ctx: Context, accountId: string, row: InspectionUrlRow) => (await views(ctx, accountId, [row]))[0];

const requestView = (r: InspectedRequestRow) => ({
  id: String(r.id),
  receivedAt: r.receivedAt,
  method: r.method,
  headers: r.headers.map(([name, value]) => ({ name, value })),
  body: r.body,
  bodyTruncated: r.bodyTruncated,
  size: r.size,
  contentEncoding: r.headers.find(([name]) => name.toLowerCase() === "content-encoding")?.[1] ?? null,
  signature: r.signature as service.SignatureCheck,
});

export const inspectorResolvers: Resolvers = {
  Query: {
    inspectionUrls: field("VIEWER", async ({ ctx, accountId }) =>
      views(ctx, accountId, await service.listInspectionUrls(ctx.db, accountId)),
    ),
    inspectionUrl: field("VIEWER", async ({ ctx, accountId, args }) =>
      one(ctx, accountId, await service.ownedInspectionUrl(ctx.db, accountId, args.id)),
    ),
    inspectedRequests: field("VIEWER", async ({ ctx, accountId, args }) =>
      (await service.inspectedRequests(ctx.db, accountId, args.id)).map(requestView),
    ),
    inspectedRequest: field("VIEWER", async ({ ctx, accountId, args }) =>
      requestView(await service.inspectedRequest(ctx.db, accountId, args.id, args.requestId)),
    ),
  },
  Mutation: {
    createInspectionUrl: fieldWithInput(
      "ADMIN",
      { schema: "inspection-url#/$defs/createInput" },
      async ({ ctx, accountId, input }) =>
        one(ctx, accountId, await service.createInspectionUrl(ctx.db, accountId, input)),
    ),
    deleteInspectionUrl: field("ADMIN", async ({ ctx, accountId, args }) => {
      const row = await service.deleteInspectionUrl(ctx.db, accountId, args.id);
      return { success: true, message: `${row.name} was deleted.` };
    }),
    clearInspectedRequests: field("ADMIN", async ({ ctx, accountId, args }) => {
      const n = await service.clearInspectedRequests(ctx.db, accountId, args.id);
      return { success: true, message: n === 1 ? "1 request was deleted." : `${n} requests were deleted.` };
    }),
  },
};
