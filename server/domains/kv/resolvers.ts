import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { badInput } from "../../platform/errors.ts";
import { publicBaseUrl } from "../../platform/http-headers.ts";
import { parseItemsText } from "./limits.ts";
import * as metering from "./metering.ts";
import type { PartStorage } from "./part-storage.ts";
import * as service from "./service.ts";
import * as uploads from "./uploads.ts";

const listView = (row: service.CollectionRow) => ({
  key: row.key,
  listId: row.key,
  numberOfItems: row.itemCount,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const addressBookView = (row: service.CollectionRow) => ({
  key: row.key,
  addressBookId: row.key,
  numberOfAddresses: row.itemCount,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const valueView = (row: service.ValueRow) => ({
  key: row.key,
  value: row.value,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const openUploadView = (row: Awaited<ReturnType<typeof uploads.openUploadsPage>>["edges"][number]["node"]) => ({
  uploadId: row.id,
  key: row.key,
  kind: row.kind === "SET" ? ("ADDRESS_BOOK" as const) : ("LIST" as const),
  partsReceived: row.received.parts,
  bytesReceived: row.received.bytes,
  startedAt: row.createdAt,
  expiresAt: row.expiresAt,
});

function mapEdges<T, V>(page: { edges: { cursor: string; node: T }[] }, view: (row: T) => V) {
  return page.edges.map((edge) => ({ cursor: edge.cursor, node: view(edge.node) }));
}

function overview<V>(
  page: Awaited<ReturnType<typeof service.collectionsPage>>,
  view: (row: service.CollectionRow) => V,
) {
  return { edges: mapEdges(page, view), pageInfo: page.pageInfo, totalCount: page.totalCount };
}

async function detail(
  ctx: { db: Parameters<typeof service.collectionDetail>[0] },
  accountId: string,
  kind: service.CollectionKind,
  args: { key: string } & service.PageArgs,
) {
  const { collection, items } = await service.collectionDetail(ctx.db, accountId, kind, args.key, args);
  return {
    collection,
    items: {
      edges: items.edges.map((edge) => ({ cursor: edge.cursor, node: { item: edge.node.item } })),
      pageInfo: items.pageInfo,
      totalCount: items.totalCount,
    },
  };
}

/** The items of an input: the list given, or the text as typed (one per line or comma-separated). */
function itemsOf(input: { items?: string[] | null; itemsText?: string | null }, required: boolean): string[] {
  if (input.items && input.itemsText)
    throw badInput([{ pointer: "/itemsText", message: "Give items or itemsText, not both." }]);
  const items = input.items ?? (input.itemsText ? parseItemsText(input.itemsText, "/itemsText") : []);
  if (required && items.length === 0) throw badInput([{ pointer: "/items", message: "Give at least one item." }]);
  return items;
}

/** Where the parts of key-value uploads are kept (the data directory, or S3). */
export interface KvApiDeps {
  kvParts: PartStorage;
  /** The uploads this service is completing. */
  completing: uploads.CompletingUploads;
}

export const kvResolvers = (deps: KvApiDeps): Resolvers => ({
  Query: {
    kvOverview: field("VIEWER", ({ ctx, accountId }) => metering.overview(ctx.db, accountId)),
    kvUploads: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await uploads.openUploadsPage(ctx.db, deps.kvParts, accountId, args);
      return { edges: mapEdges(page, openUploadView), pageInfo: page.pageInfo, totalCount: page.totalCount };
    }),
    lists: field("VIEWER", async ({ ctx, accountId, args }) =>
      overview(await service.collectionsPage(ctx.db, accountId, "LIST", args), listView),
    ),
    list: field("VIEWER", async ({ ctx, accountId, args }) => {
      const { collection, items } = await detail(ctx, accountId, "LIST", args);
      return { list: listView(collection), items };
    }),
    addressBooks: field("VIEWER", async ({ ctx, accountId, args }) =>
      overview(await service.collectionsPage(ctx.db, accountId, "SET", args), addressBookView),
    ),
    addressBook: field("VIEWER", async ({ ctx, accountId, args }) => {
      const { collection, items } = await detail(ctx, accountId, "SET", args);
      return { addressBook: addressBookView(collection), items };
    }),
    values: field("VIEWER", async ({ ctx, accountId, args }) => {
      const page = await service.valuesPage(ctx.db, accountId, args);
      return { edges: mapEdges(page, valueView), pageInfo: page.pageInfo, totalCount: page.totalCount };
    }),
    value: field("VIEWER", async ({ ctx, accountId, args }) =>
      valueView(await service.getValue(ctx.db, accountId, args.key)),
    ),
  },
  Mutation: {
    createList: fieldWithInput("ADMIN", { schema: "kv-list#/$defs/createInput" }, ({ ctx, accountId, input }) =>
      service.createCollection(ctx.db, accountId, "LIST", input.key, itemsOf(input, false)),
    ),
    deleteList: field("ADMIN", ({ ctx, accountId, args }) =>
      service.deleteCollection(ctx.db, accountId, "LIST", args.key),
    ),
    addListItems: fieldWithInput("ADMIN", { schema: "kv-list#/$defs/itemsInput" }, ({ ctx, accountId, input }) =>
      service.addCollectionItems(ctx.db, accountId, "LIST", input.key, itemsOf(input, true)),
    ),
    removeListItems: fieldWithInput("ADMIN", { schema: "kv-list#/$defs/itemsInput" }, ({ ctx, accountId, input }) =>
      service.removeCollectionItems(ctx.db, accountId, "LIST", input.key, itemsOf(input, true)),
    ),
    createAddressBook: fieldWithInput(
      "ADMIN",
      { schema: "address-book#/$defs/createInput" },
      ({ ctx, accountId, input }) =>
        service.createCollection(ctx.db, accountId, "SET", input.key, itemsOf(input, false)),
    ),
    deleteAddressBook: field("ADMIN", ({ ctx, accountId, args }) =>
      service.deleteCollection(ctx.db, accountId, "SET", args.key),
    ),
    addAddressBookItems: fieldWithInput(
      "ADMIN",
      { schema: "address-book#/$defs/itemsInput" },
      ({ ctx, accountId, input }) =>
        service.addCollectionItems(ctx.db, accountId, "SET", input.key, itemsOf(input, true)),
    ),
    removeAddressBookItems: fieldWithInput(
      "ADMIN",
      { schema: "address-book#/$defs/itemsInput" },
      ({ ctx, accountId, input }) =>
        service.removeCollectionItems(ctx.db, accountId, "SET", input.key, itemsOf(input, true)),
    ),
    createValue: fieldWithInput("ADMIN", { schema: "kv-value#/$defs/valueInput" }, async ({ ctx, accountId, input }) =>
      valueView(await service.createValue(ctx.db, accountId, input)),
    ),
    updateValue: fieldWithInput("ADMIN", { schema: "kv-value#/$defs/valueInput" }, async ({ ctx, accountId, input }) =>
      valueView(await service.updateValue(ctx.db, accountId, input)),
    ),
    deleteValue: field("ADMIN", ({ ctx, accountId, args }) => service.deleteValue(ctx.db, accountId, args.key)),
    addValues: fieldWithInput("ADMIN", { schema: "kv-value#/$defs/addValuesInput" }, ({ ctx, accountId, input }) =>
      service.addValues(ctx.db, accountId, input.values),
    ),
    removeValues: fieldWithInput(
      "ADMIN",
      { schema: "kv-value#/$defs/removeValuesInput" },
      ({ ctx, accountId, input }) => service.removeValues(ctx.db, accountId, input.keys),
    ),
    initiateListUpload: fieldWithInput(
      "ADMIN",
      { schema: "kv-upload#/$defs/initiateInput" },
      ({ ctx, accountId, input }) =>
        uploads.initiateUpload(ctx.db, deps.kvParts, accountId, "LIST", input.key, input.size ?? null),
    ),
    initiateAddressBookUpload: fieldWithInput(
      "ADMIN",
      { schema: "kv-upload#/$defs/initiateInput" },
      ({ ctx, accountId, input }) =>
        uploads.initiateUpload(ctx.db, deps.kvParts, accountId, "SET", input.key, input.size ?? null),
    ),
    kvUploadPartUrl: fieldWithInput("ADMIN", { schema: "kv-upload#/$defs/partInput" }, ({ ctx, accountId, input }) =>
      uploads.partUrl(
        ctx.db,
        deps.kvParts,
        accountId,
        input.uploadId,
        input.partNumber,
        publicBaseUrl(ctx.config, ctx.request),
      ),
    ),
    completeKvUpload: field("ADMIN", ({ ctx, accountId, args }) =>
      uploads.completeUpload(ctx.db, deps.kvParts, deps.completing, accountId, args.uploadId),
    ),
    abortKvUpload: field("ADMIN", ({ ctx, accountId, args }) =>
      uploads.abortUpload(ctx.db, deps.kvParts, accountId, args.uploadId),
    ),
  },
});
