import { readFileSync } from "node:fs";
import path from "node:path";
import type { Context } from "../../graphql/context.ts";
import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { readFrom, snapshotRead } from "../../graphql/response-cache.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { publicBaseUrl } from "../../platform/http-headers.ts";
import { findNetwork } from "../catalogue/networks.ts";
import type { EndpointListCache } from "./list-cache.ts";
import * as service from "./service.ts";
import type * as store from "./store.ts";

type QuickstartCatalogue = Record<string, { apps: unknown[]; dapps: unknown[]; wallets: unknown[] }>;
const quickstart = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, "../../../schemas/catalogue/quickstart.json"), "utf8"),
) as QuickstartCatalogue;

export function endpointUrls(base: string, exId: string) {
  const httpUrl = `${base}/rpc/${exId}`;
  return { httpUrl, wssUrl: httpUrl.replace(/^http/, "ws") };
}

/** What the Endpoint type's fields resolve from (the generated types' mapper for Endpoint). */
export type EndpointView = ReturnType<typeof endpointView>;

function endpointView(base: string, row: store.EndpointRow, tags: { tagId: string; label: string }[]) {
  const found = findNetwork(row.network);
  const compatibility = found?.chain.chainCompatibility ?? "evm";
  return {
    id: row.id,
    name: row.name,
    exId: row.exId,
    label: row.label,
    chain: row.chain,
    network: row.network,
    canonicalNetwork: found?.network.canonicalNetwork ?? row.network,
    status: row.status,
    ...endpointUrls(base, row.exId),
    chainCompatibility: compatibility,
    docsExName: row.chain,
    isDedicated: row.isDedicated,
    isSelectChain: false,
    isRollup: false,
    tags,
    quickstart: quickstart[compatibility] ?? { apps: [], dapps: [], wallets: [] },
    // DateTime's text, written here once: a listed endpoint's view is kept and served on every page.
    createdAt: row.createdAt.toISOString(),
    accountId: row.accountId,
  };
}

/**
 * Views of listed endpoints by row, one per service (the endpoints plugin makes it, beside its list cache).
 * The list cache hands out the same row and tags objects on every request, so a listed endpoint's view is
 * built once per base URL, not per page; rows read by SQL are new objects and simply miss. Keyed weakly:
 * a row the list cache let go is forgotten with it.
 */
export class ListedViews {
  private readonly byRow = new WeakMap<
    store.EndpointRow,
    { base: string; tags: store.EndpointTag[]; view: EndpointView }
  >();

  of(base: string, row: store.EndpointRow, tags: store.EndpointTag[]): EndpointView {
    const listed = this.byRow.get(row);
    if (listed?.base === base && listed.tags === tags) return listed.view;
    const view = endpointView(base, row, tags);
    this.byRow.set(row, { base, tags, view });
    return view;
  }
}

async function viewsWithTags(ctx: Context, accountId: string, rows: store.EndpointRow[]) {
  const links = await service.tagsOfEndpoints(
    ctx.db,
    accountId,
    rows.map((r) => r.id),
  );
  return rows.map((row) =>
    endpointView(
      publicBaseUrl(ctx.config, ctx.request),
      row,
      links.filter((l) => l.endpointId === row.id).map((l) => ({ tagId: l.tagId, label: l.label })),
    ),
  );
}

async function oneView(ctx: Context, accountId: string, row: store.EndpointRow) {
  const [view] = await viewsWithTags(ctx, accountId, [row]);
  return view;
}

/** What the endpoints API needs of the running service. */
export interface EndpointApiDeps {
  events: DomainEvents;
  /** Each account's endpoints as the list pages them, kept in the process. */
  endpointLists: EndpointListCache;
  /** The views of listed endpoints, kept for the list cache's rows. */
  listedViews: ListedViews;
  endpointCreatedHooks: service.EndpointCreatedHook[];
}

export const endpointResolvers = (deps: EndpointApiDeps): Resolvers => ({
  Query: {
    endpoint: field("VIEWER", async ({ ctx, accountId, args }) =>
      oneView(ctx, accountId, await service.getEndpointOrFail(ctx.db, accountId, args.id)),
    ),
    endpoints: snapshotRead(
      field("VIEWER", async ({ ctx, accountId, args }) => {
        const page = await service.listEndpoints(ctx.db, deps.endpointLists, accountId, args);
        readFrom(ctx.reads, page.isCurrent);
        const base = publicBaseUrl(ctx.config, ctx.request);
        return {
          edges: page.edges.map(({ cursor, node }) => ({
            cursor,
            node: deps.listedViews.of(base, node.endpoint, node.tags),
          })),
          pageInfo: page.pageInfo,
          totalCount: page.totalCount,
        };
      }),
    ),
    tags: field("VIEWER", ({ ctx, accountId }) => service.listTags(ctx.db, accountId)),
  },
  Mutation: {
    createEndpoint: fieldWithInput(
      "ADMIN",
      { schema: "endpoint#/$defs/createInput" },
      async ({ ctx, accountId, input }) => {
        const { endpoint, shownOnce } = await service.createEndpoint(
          ctx.db,
          deps.events,
          deps.endpointCreatedHooks,
          accountId,
          input,
        );
        return { ...(await oneView(ctx, accountId, endpoint)), ...shownOnce };
      },
    ),
    updateEndpointLabel: fieldWithInput(
      "ADMIN",
      { schema: "endpoint#/$defs/labelInput", of: (args) => ({ label: args.label }) },
      async ({ ctx, accountId, args, input }) =>
        oneView(ctx, accountId, await service.updateLabel(ctx.db, deps.events, accountId, args.id, input.label)),
    ),
    toggleEndpointPaused: field("ADMIN", async ({ ctx, accountId, args }) =>
      oneView(ctx, accountId, await service.togglePaused(ctx.db, deps.events, accountId, args.id)),
    ),
    archiveEndpoint: field("ADMIN", async ({ ctx, accountId, args }) =>
      oneView(ctx, accountId, await service.archive(ctx.db, deps.events, accountId, args.id)),
    ),
    addEndpointTag: fieldWithInput(
      "ADMIN",
      { schema: "endpoint#/$defs/tagInput", of: (args) => ({ label: args.label }) },
      async ({ ctx, accountId, args, input }) =>
        oneView(ctx, accountId, await service.addTag(ctx.db, deps.events, accountId, args.endpointId, input.label)),
    ),
    removeEndpointTag: field("ADMIN", async ({ ctx, accountId, args }) =>
      oneView(ctx, accountId, await service.removeTag(ctx.db, deps.events, accountId, args.endpointId, args.tagId)),
    ),
    deleteTag: field("ADMIN", async ({ ctx, accountId, args }) => {
      await service.deleteTag(ctx.db, deps.events, accountId, args.tagId);
      return { success: true, message: "The tag was deleted.", error: null };
    }),
  },
});
