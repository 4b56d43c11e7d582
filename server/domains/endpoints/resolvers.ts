import { readFileSync } from "node:fs";
import path from "node:path";
import { type Context, requirePrincipal, requireRole } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { validateInput } from "../../platform/validation.ts";
import { findNetwork } from "../catalogue/networks.ts";
import * as service from "./service.ts";
import * as store from "./store.ts";

type QuickstartCatalogue = Record<string, { apps: unknown[]; dapps: unknown[]; wallets: unknown[] }>;
const quickstart = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, "../../../schemas/catalogue/quickstart.json"), "utf8"),
) as QuickstartCatalogue;

/** The base URL endpoint URLs are built from: PUBLIC_URL, or the address this request came to. */
function publicBase(ctx: Context): string {
  return ctx.config.publicUrl ?? `${ctx.request.protocol}://${ctx.request.host}`;
}

export function endpointUrls(base: string, exId: string) {
  const httpUrl = `${base}/rpc/${exId}`;
  return { httpUrl, wssUrl: httpUrl.replace(/^http/, "ws") };
}

function endpointView(ctx: Context, row: store.EndpointRow, tags: { tagId: string; label: string }[]) {
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
    ...endpointUrls(publicBase(ctx), row.exId),
    chainCompatibility: compatibility,
    docsExName: row.chain,
    isDedicated: row.isDedicated,
    isSelectChain: false,
    isRollup: false,
    tags,
    quickstart: quickstart[compatibility] ?? { apps: [], dapps: [], wallets: [] },
    // No add-on can be installed before the marketplace exists.
    installedAddons: [],
    createdAt: row.createdAt,
    accountId: row.accountId,
  };
}

async function viewsWithTags(ctx: Context, accountId: string, rows: store.EndpointRow[]) {
  const links = await store.tagsOfEndpoints(
    ctx.db,
    accountId,
    rows.map((r) => r.id),
  );
  return rows.map((row) =>
    endpointView(
      ctx,
      row,
      links.filter((l) => l.endpointId === row.id).map((l) => ({ tagId: l.tagId, label: l.label })),
    ),
  );
}

async function oneView(ctx: Context, accountId: string, row: store.EndpointRow) {
  const [view] = await viewsWithTags(ctx, accountId, [row]);
  return view;
}

interface ListArgs {
  first?: number | null;
  after?: string | null;
  search?: string | null;
  tagIds?: string[] | null;
  status?: string | null;
  orderBy?: store.EndpointOrder | null;
}

export const endpointResolvers: Resolvers = {
  Query: {
    endpoint: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return oneView(ctx, accountId, await service.getEndpointOrFail(ctx.db, accountId, args.id));
    },
    endpoints: async (_: unknown, args: ListArgs, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      const page = await service.listEndpoints(ctx.db, accountId, args);
      const edges = page.rows.map(({ endpoint, tags }) => ({
        cursor: service.encodeCursor(store.cursorOf(endpoint, page.order)),
        node: endpointView(ctx, endpoint, tags),
      }));
      return {
        edges,
        pageInfo: { endCursor: edges.at(-1)?.cursor ?? null, hasNextPage: page.hasNextPage },
        totalCount: page.totalCount,
      };
    },
    tags: async (_: unknown, __: unknown, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return store.listTags(ctx.db, accountId);
    },
  },
  Mutation: {
    createEndpoint: async (_: unknown, args: { input: unknown }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<{ chain: string; network: string; label?: string }>(
        "endpoint#/$defs/createInput",
        args.input,
      );
      const { endpoint, shownOnce } = await service.createEndpoint(
        ctx.db,
        ctx.services.events,
        ctx.services.endpointCreatedHooks,
        accountId,
        input,
      );
      return { ...(await oneView(ctx, accountId, endpoint)), ...shownOnce };
    },
    updateEndpointLabel: async (_: unknown, args: { id: string; label: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      validateInput("endpoint#/$defs/labelInput", { label: args.label });
      return oneView(
        ctx,
        accountId,
        await service.updateLabel(ctx.db, ctx.services.events, accountId, args.id, args.label),
      );
    },
    toggleEndpointPaused: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return oneView(ctx, accountId, await service.togglePaused(ctx.db, ctx.services.events, accountId, args.id));
    },
    archiveEndpoint: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return oneView(ctx, accountId, await service.archive(ctx.db, ctx.services.events, accountId, args.id));
    },
    addEndpointTag: async (_: unknown, args: { endpointId: string; label: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      validateInput("endpoint#/$defs/tagInput", { label: args.label });
      return oneView(
        ctx,
        accountId,
        await service.addTag(ctx.db, ctx.services.events, accountId, args.endpointId, args.label),
      );
    },
    removeEndpointTag: async (_: unknown, args: { endpointId: string; tagId: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return oneView(
        ctx,
        accountId,
        await service.removeTag(ctx.db, ctx.services.events, accountId, args.endpointId, args.tagId),
      );
    },
    deleteTag: async (_: unknown, args: { tagId: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      await service.deleteTag(ctx.db, accountId, args.tagId);
      return { success: true, message: "The tag was deleted.", error: null };
    },
  },
};
