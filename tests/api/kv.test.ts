import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createFilter, testFilter } from "../../server/dataplane/sandbox/filter.ts";
import { kvFilterHelpers } from "../../server/domains/kv/filter-helpers.ts";
import * as kvStore from "../../server/domains/kv/store.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signIn, signUp, type TestUser, useTestApp } from "../support/api.ts";
import type { VariablesOf } from "../support/operations.ts";

// The key-value store: lists, address books (sets) and values per account, the plan's limits,
// multipart uploads into lists and address books, and the helpers filters and functions read it with.

const ctx = useTestApp();
const DEMO_PASSWORD = "demo-password-for-tests";

const ADD = "success key addedCount";
const REMOVE = "success key removedCount";
const address = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;

async function createList(client: GqlClient, input: VariablesOf<"CreateList">["input"]) {
  return client.op("CreateList", { input });
}

async function listDetail(client: GqlClient, variables: Record<string, unknown>) {
  return client.gqlOk<{
    list: {
      list: { key: string; listId: string; numberOfItems: number };
      items: {
        edges: { node: { item: string } }[];
        pageInfo: { endCursor: string; hasNextPage: boolean };
        totalCount: number;
      };
    };
  }>(
    `query($key: String!, $after: String, $limit: Int, $searchTerm: String) {
      list(key: $key, after: $after, limit: $limit, searchTerm: $searchTerm) {
        list { key listId numberOfItems }
        items { edges { node { item } } pageInfo { endCursor hasNextPage } totalCount }
      }
    }`,
    variables,
  );
}

async function bookDetail(client: GqlClient, key: string, limit = 5, searchTerm?: string) {
  return client.gql<{
    addressBook: {
      addressBook: { addressBookId: string; numberOfAddresses: number };
      items: { edges: { node: { item: string } }[]; totalCount: number };
    };
  }>(
    `query($key: String!, $limit: Int, $searchTerm: String) {
      addressBook(key: $key, limit: $limit, searchTerm: $searchTerm) {
        addressBook { addressBookId numberOfAddresses }
        items { edges { node { item } } totalCount }
      }
    }`,
    { key, limit, searchTerm },
  );
}

const db = () => openDatabase(ctx.app.database.url, 2);

describe("lists", () => {
  it("are created, paged, searched, added to, removed from and deleted", async () => {
    const owner = await signUp(ctx.app);
    const created = await createList(owner.client, { key: "colours", items: ["red", "green", "blue", "green"] });
    expect(created.data?.createList).toEqual({ success: true, key: "colours", addedCount: 4 });
    expect((await createList(owner.client, { key: "colours" })).errors?.[0].extensions?.code).toBe("CONFLICT");

    const first = await listDetail(owner.client, { key: "colours", limit: 3 });
    expect(first.list.list).toEqual({ key: "colours", listId: "colours", numberOfItems: 4 });
    expect(first.list.items.edges.map((e) => e.node.item)).toEqual(["red", "green", "blue"]);
    expect(first.list.items.pageInfo.hasNextPage).toBe(true);
    const second = await listDetail(owner.client, {
      key: "colours",
      limit: 3,
      after: first.list.items.pageInfo.endCursor,
    });
    expect(second.list.items.edges.map((e) => e.node.item)).toEqual(["green"]);
    expect(second.list.items.pageInfo.hasNextPage).toBe(false);
    const searched = await listDetail(owner.client, { key: "colours", searchTerm: "RE" });
    expect(searched.list.items.edges.map((e) => e.node.item)).toEqual(["red", "green", "green"]);
    expect(searched.list.items.totalCount).toBe(3);

    const added = await owner.client.opOk("AddListItems", {
      input: { key: "colours", itemsText: "cyan\nmagenta, yellow\n\n" },
    });
    expect(added.addListItems).toEqual({ success: true, key: "colours", addedCount: 3 });
    const removed = await owner.client.opOk("RemoveListItems", {
      input: { key: "colours", items: ["green", "black"] },
    });
    expect(removed.removeListItems).toEqual({ success: true, key: "colours", removedCount: 2 });
    const after = await listDetail(owner.client, { key: "colours", limit: 10 });
    expect(after.list.items.edges.map((e) => e.node.item)).toEqual(["red", "blue", "cyan", "magenta", "yellow"]);
    expect(after.list.list.numberOfItems).toBe(5);

    await createList(owner.client, { key: "shapes" });
    await createList(owner.client, { key: "sizes" });
    const overview = await owner.client.gqlOk<{
      lists: {
        edges: { node: { key: string; numberOfItems: number } }[];
        totalCount: number;
        pageInfo: { endCursor: string };
      };
    }>("{ lists(limit: 2) { edges { node { key numberOfItems } } totalCount pageInfo { endCursor } } }");
    expect(overview.lists.edges.map((e) => e.node.key)).toEqual(["colours", "shapes"]);
    expect(overview.lists.totalCount).toBe(3);
    const next = await owner.client.gqlOk<{ lists: { edges: { node: { key: string } }[] } }>(
      "query($after: String) { lists(after: $after, limit: 2) { edges { node { key } } } }",
      { after: overview.lists.pageInfo.endCursor },
    );
    expect(next.lists.edges.map((e) => e.node.key)).toEqual(["sizes"]);
    const search = await owner.client.gqlOk<{ lists: { totalCount: number } }>(
      '{ lists(searchTerm: "S") { totalCount } }',
    );
    expect(search.lists.totalCount).toBe(3);
    const sOnly = await owner.client.gqlOk<{ lists: { totalCount: number } }>(
      '{ lists(searchTerm: "si") { totalCount } }',
    );
    expect(sOnly.lists.totalCount).toBe(1);

    const deleted = await owner.client.gqlOk<{ deleteList: unknown }>(
      'mutation { deleteList(key: "shapes") { success key } }',
    );
    expect(deleted.deleteList).toEqual({ success: true, key: "shapes" });
    const again = await owner.client.gql('mutation { deleteList(key: "shapes") { success key } }');
    expect(again.errors?.[0].extensions?.code).toBe("NOT_FOUND");
  });

  it("refuse bad keys and items, naming them", async () => {
    const owner = await signUp(ctx.app);
    const badKey = await createList(owner.client, { key: "has space" });
    expect(badKey.errors?.[0].extensions?.fields).toEqual([
      { pointer: "/key", message: expect.stringContaining("1 to 128") },
    ]);
    const badItem = await createList(owner.client, { key: "ok", items: ["fine", "x".repeat(257)] });
    expect(badItem.errors?.[0].extensions?.fields).toEqual([
      { pointer: "/items/1", message: expect.stringContaining("256") },
    ]);
    const badLine = await createList(owner.client, { key: "ok", itemsText: `a\nb\n${"y".repeat(300)}` });
    expect(badLine.errors?.[0].message).toContain("Line 3:");
    const none = await owner.client.gql('mutation { addListItems(input: { key: "ok", items: [] }) { success } }');
    expect(none.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    // Nothing was made by the refused creations.
    const { lists } = await owner.client.gqlOk<{ lists: { totalCount: number } }>("{ lists { totalCount } }");
    expect(lists.totalCount).toBe(0);
  });
});

describe("address books", () => {
  it("keep unique addresses; addedCount counts the new ones; a list key is not an address book", async () => {
    const owner = await signUp(ctx.app);
    const created = await owner.client.opOk("CreateAddressBook", {
      input: { key: "watched", items: [address(3), address(1), address(3)] },
    });
    expect(created.createAddressBook).toEqual({ success: true, key: "watched", addedCount: 2 });
    const added = await owner.client.opOk("AddAddressBookItems", {
      input: { key: "watched", items: [address(1), address(2)] },
    });
    expect(added.addAddressBookItems.addedCount).toBe(1);
    const book = await bookDetail(owner.client, "watched");
    expect(book.data?.addressBook.addressBook).toEqual({ addressBookId: "watched", numberOfAddresses: 3 });
    expect(book.data?.addressBook.items.edges.map((e) => e.node.item)).toEqual([address(1), address(2), address(3)]);
    expect((await bookDetail(owner.client, "watched", 5, "02")).data?.addressBook.items.totalCount).toBe(1);
    const removed = await owner.client.opOk("RemoveAddressBookItems", {
      input: { key: "watched", items: [address(2), address(9)] },
    });
    expect(removed.removeAddressBookItems.removedCount).toBe(1);
    const { addressBooks } = await owner.client.gqlOk<{
      addressBooks: { edges: { node: { key: string; numberOfAddresses: number } }[] };
    }>("{ addressBooks { edges { node { key numberOfAddresses } } } }");
    expect(addressBooks.edges.map((e) => e.node)).toEqual([{ key: "watched", numberOfAddresses: 2 }]);

    await createList(owner.client, { key: "plain" });
    expect((await bookDetail(owner.client, "plain")).errors?.[0].extensions?.code).toBe("NOT_FOUND");
    const taken = await owner.client.gql('mutation { createAddressBook(input: { key: "plain" }) { success } }');
    expect(taken.errors?.[0].extensions?.code).toBe("CONFLICT");
    const gone = await owner.client.gqlOk<{ deleteAddressBook: unknown }>(
      'mutation { deleteAddressBook(key: "watched") { success key } }',
    );
    expect(gone.deleteAddressBook).toEqual({ success: true, key: "watched" });
  });
});

describe("address books without regard to case", () => {
  it("hold one address in any case once, remove it in any case, and filters agree", async () => {
    const owner = await signUp(ctx.app);
    const mixed = "0xAbCdEf0000000000000000000000000000000001";
    const created = await owner.client.opOk("CreateAddressBook", {
      input: { key: "watch", items: [mixed, mixed.toLowerCase(), mixed.toUpperCase().replace("0X", "0x")] },
    });
    expect(created.createAddressBook).toEqual({ success: true, key: "watch", addedCount: 1 });
    const again = await owner.client.opOk("AddAddressBookItems", {
      input: { key: "watch", items: [mixed.toUpperCase()] },
    });
    expect(again.addAddressBookItems.addedCount).toBe(0);
    const book = await bookDetail(owner.client, "watch");
    expect(book.data?.addressBook.items.edges.map((e) => e.node.item)).toEqual([mixed.toLowerCase()]);
    const database = db();
    try {
      const helpers = kvFilterHelpers(database)(owner.viewer.id);
      expect(await helpers.qnContainsAddressBookItems("watch", [mixed.toUpperCase().replace("0X", "0x")])).toEqual([
        true,
      ]);
      const removed = await owner.client.opOk("RemoveAddressBookItems", { input: { key: "watch", items: [mixed] } });
      expect(removed.removeAddressBookItems.removedCount).toBe(1);
      expect(await helpers.qnContainsAddressBookItems("watch", [mixed.toLowerCase()])).toEqual([false]);
    } finally {
      await database.$client.end();
    }
  });
});

describe("text", () => {
  const UNPAIRED = "This contains an unpaired UTF-16 surrogate (half of a character), which cannot be stored.";

  it("with an unpaired surrogate is refused on its field, not stored altered; a whole pair is kept", async () => {
    const owner = await signUp(ctx.app);
    const value = await owner.client.gql("mutation($input: KvValueInput!) { createValue(input: $input) { key } }", {
      input: { key: "half", value: "a\ud800" },
    });
    expect(value.errors?.[0].extensions).toEqual({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/value", message: UNPAIRED }],
    });
    const items = await createList(owner.client, { key: "halves", items: ["ok", "\udc00b"] });
    expect(items.errors?.[0].extensions).toEqual({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/items/1", message: UNPAIRED }],
    });
    const key = await owner.client.gql("mutation($input: KvValueInput!) { createValue(input: $input) { key } }", {
      input: { key: "\udbff", value: "x" },
    });
    expect(key.errors?.[0].extensions?.fields).toEqual([{ pointer: "/key", message: UNPAIRED }]);
    const { values } = await owner.client.gqlOk<{ values: { totalCount: number } }>("{ values { totalCount } }");
    expect(values.totalCount).toBe(0);

    await owner.client.gqlOk("mutation($input: KvValueInput!) { createValue(input: $input) { key } }", {
      input: { key: "whole", value: "a\ud83d\ude00b" },
    });
    const kept = await owner.client.gqlOk<{ value: { value: string } }>('{ value(key: "whole") { value } }');
    expect(kept.value.value).toBe("a😀b");
  });
});

describe("values", () => {
  it("are created, read, paged, searched, updated, set in bulk and removed", async () => {
    const owner = await signUp(ctx.app);
    const create = (key: string, value: string) =>
      owner.client.gql<{ createValue: { key: string; value: string } }>(
        "mutation($input: KvValueInput!) { createValue(input: $input) { key value } }",
        { input: { key, value } },
      );
    expect((await create("greeting", "hello")).data?.createValue).toEqual({ key: "greeting", value: "hello" });
    expect((await create("greeting", "again")).errors?.[0].extensions?.code).toBe("CONFLICT");
    await create("farewell", "bye");
    const updated = await owner.client.gqlOk<{ updateValue: { value: string } }>(
      'mutation { updateValue(input: { key: "greeting", value: "hi" }) { value } }',
    );
    expect(updated.updateValue.value).toBe("hi");
    const missing = await owner.client.gql('mutation { updateValue(input: { key: "nope", value: "x" }) { value } }');
    expect(missing.errors?.[0].extensions?.code).toBe("NOT_FOUND");

    const bulk = await owner.client.gqlOk<{ addValues: { addedCount: number } }>(
      `mutation($input: AddKvValuesInput!) { addValues(input: $input) { ${ADD} } }`,
      {
        input: {
          values: [
            { key: "a1", value: "1" },
            { key: "a2", value: "2" },
            { key: "greeting", value: "hey" },
          ],
        },
      },
    );
    expect(bulk.addValues.addedCount).toBe(3);
    const page = await owner.client.gqlOk<{
      values: {
        edges: { node: { key: string; value: string } }[];
        totalCount: number;
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    }>("{ values(first: 2) { edges { node { key value } } totalCount pageInfo { hasNextPage endCursor } } }");
    expect(page.values.edges.map((e) => e.node.key)).toEqual(["a1", "a2"]);
    expect(page.values.totalCount).toBe(4);
    expect(page.values.pageInfo.hasNextPage).toBe(true);
    const rest = await owner.client.gqlOk<{ values: { edges: { node: { key: string; value: string } }[] } }>(
      "query($after: String) { values(first: 10, after: $after) { edges { node { key value } } } }",
      { after: page.values.pageInfo.endCursor },
    );
    expect(rest.values.edges.map((e) => e.node)).toEqual([
      { key: "farewell", value: "bye" },
      { key: "greeting", value: "hey" },
    ]);
    const searched = await owner.client.gqlOk<{ values: { totalCount: number } }>(
      '{ values(searchTerm: "a") { totalCount } }',
    );
    // Keys containing "a": a1, a2 and farewell.
    expect(searched.values.totalCount).toBe(3);
    const { value } = await owner.client.gqlOk<{ value: { value: string } }>('{ value(key: "farewell") { value } }');
    expect(value.value).toBe("bye");

    const removed = await owner.client.gqlOk<{ removeValues: { removedCount: number } }>(
      `mutation { removeValues(input: { keys: ["a1", "a2", "zz"] }) { ${REMOVE} } }`,
    );
    expect(removed.removeValues.removedCount).toBe(2);
    await owner.client.gqlOk('mutation { deleteValue(key: "farewell") { success } }');
    expect((await owner.client.gql('{ value(key: "farewell") { value } }')).errors?.[0].extensions?.code).toBe(
      "NOT_FOUND",
    );
  });
});

describe("limits (the Free plan: 10 keys, 10,000 items per key, values of 1,024 bytes)", () => {
  it("refuse the key, item or byte past the plan, writing nothing", async () => {
    const owner = await signUp(ctx.app);
    for (let i = 0; i < 9; i++) expect((await createList(owner.client, { key: `k${i}` })).errors).toBeUndefined();
    const tenth = await owner.client.gql('mutation { createValue(input: { key: "v", value: "x" }) { key } }');
    expect(tenth.errors).toBeUndefined();
    const eleventh = await createList(owner.client, { key: "k9" });
    expect(eleventh.errors?.[0].extensions?.code).toBe("CONFLICT");
    expect(eleventh.errors?.[0].message).toContain("Your plan allows 10 keys");
    const eleventhValue = await owner.client.gql(
      'mutation { addValues(input: { values: [{ key: "w", value: "x" }] }) { addedCount } }',
    );
    expect(eleventhValue.errors?.[0].extensions?.code).toBe("CONFLICT");

    const big = await owner.client.gql(
      'mutation($v: String!) { updateValue(input: { key: "v", value: $v }) { key } }',
      {
        v: "é".repeat(513),
      },
    );
    expect(big.errors?.[0].extensions?.fields).toEqual([
      { pointer: "/value", message: expect.stringContaining("1,026 bytes") },
    ]);

    const add = (items: string[]) =>
      owner.client.gql<{ addListItems: { addedCount: number } }>(
        "mutation($input: KvItemsInput!) { addListItems(input: $input) { addedCount } }",
        { input: { key: "k0", items } },
      );
    const many = Array.from({ length: 5000 }, (_, i) => `item-${i}`);
    expect((await add(many)).data?.addListItems.addedCount).toBe(5000);
    expect((await add(many)).data?.addListItems.addedCount).toBe(5000);
    const over = await add(["one too many"]);
    expect(over.errors?.[0].extensions?.code).toBe("CONFLICT");
    expect(over.errors?.[0].message).toBe(
      '"k0" would hold 10,001 items; your plan allows 10,000 per list or address book. Remove some items first, or upgrade your plan.',
    );
    const tooManyAtOnce = await add(Array.from({ length: 5001 }, (_, i) => `x${i}`));
    expect(tooManyAtOnce.errors?.[0].message).toBe("The input is not valid.");
    expect(tooManyAtOnce.errors?.[0].extensions?.fields).toEqual([
      { pointer: "/items", message: expect.stringContaining("upload a file") },
    ]);
    const detail = await listDetail(owner.client, { key: "k0", limit: 1 });
    expect(detail.list.list.numberOfItems).toBe(10_000);
  });
});

describe("roles and tenancy", () => {
  it("a viewer reads but changes nothing; another account can read or change none of it", async () => {
    const owner = await signIn(ctx.app, "demo@nodeplane.local", DEMO_PASSWORD);
    const viewer = await signIn(ctx.app, "viewer@nodeplane.local", DEMO_PASSWORD);
    await createList(owner.client, { key: "tenancy-list", items: ["secret"] });
    await owner.client.gqlOk(
      'mutation { createAddressBook(input: { key: "tenancy-book", items: ["0xabc"] }) { success } }',
    );
    await owner.client.gqlOk('mutation { createValue(input: { key: "tenancy-value", value: "secret" }) { key } }');
    const { initiateListUpload } = await owner.client.gqlOk<{ initiateListUpload: { uploadId: string } }>(
      'mutation { initiateListUpload(input: { key: "tenancy-list" }) { uploadId key bucket } }',
    );

    expect((await listDetail(viewer.client, { key: "tenancy-list" })).list.list.numberOfItems).toBe(1);
    expect((await createList(viewer.client, { key: "viewer-made" })).errors?.[0].extensions?.code).toBe("FORBIDDEN");

    const other = await signUp(ctx.app);
    const reads = [
      '{ list(key: "tenancy-list") { list { key } } }',
      '{ addressBook(key: "tenancy-book") { addressBook { key } } }',
      '{ value(key: "tenancy-value") { value } }',
    ];
    for (const query of reads) expect((await other.client.gql(query)).errors?.[0].extensions?.code).toBe("NOT_FOUND");
    const overviews = await other.client.gqlOk<{
      lists: { totalCount: number };
      addressBooks: { totalCount: number };
      values: { totalCount: number };
    }>("{ lists { totalCount } addressBooks { totalCount } values { totalCount } }");
    expect(overviews).toEqual({ lists: { totalCount: 0 }, addressBooks: { totalCount: 0 }, values: { totalCount: 0 } });
    const uploadId = initiateListUpload.uploadId;
    const writes = [
      'mutation { deleteList(key: "tenancy-list") { success } }',
      'mutation { addListItems(input: { key: "tenancy-list", items: ["x"] }) { success } }',
      'mutation { removeListItems(input: { key: "tenancy-list", items: ["secret"] }) { success } }',
      'mutation { deleteAddressBook(key: "tenancy-book") { success } }',
      'mutation { removeAddressBookItems(input: { key: "tenancy-book", items: ["0xabc"] }) { success } }',
      'mutation { updateValue(input: { key: "tenancy-value", value: "x" }) { key } }',
      'mutation { deleteValue(key: "tenancy-value") { success } }',
      `mutation { kvUploadPartUrl(input: { uploadId: "${uploadId}", partNumber: 1 }) { url } }`,
      `mutation { completeKvUpload(uploadId: "${uploadId}") { success } }`,
      `mutation { abortKvUpload(uploadId: "${uploadId}") { success } }`,
    ];
    for (const mutation of writes)
      expect((await other.client.gql(mutation)).errors?.[0].extensions?.code, mutation).toBe("NOT_FOUND");
    // The other account's own key of the same name is its own.
    expect((await createList(other.client, { key: "tenancy-list" })).errors).toBeUndefined();
    const removeValues = await other.client.gqlOk<{ removeValues: { removedCount: number } }>(
      'mutation { removeValues(input: { keys: ["tenancy-value"] }) { removedCount } }',
    );
    expect(removeValues.removeValues.removedCount).toBe(0);

    const { list } = await listDetail(owner.client, { key: "tenancy-list" });
    expect(list.items.edges.map((e) => e.node.item)).toEqual(["secret"]);
    const { value } = await owner.client.gqlOk<{ value: { value: string } }>(
      '{ value(key: "tenancy-value") { value } }',
    );
    expect(value.value).toBe("secret");
    const book = await bookDetail(owner.client, "tenancy-book");
    expect(book.data?.addressBook.addressBook.numberOfAddresses).toBe(1);

    // The helpers of the other account see nothing of the owner's.
    const database = db();
    try {
      const theirs = kvFilterHelpers(database)(other.viewer.id);
      expect(await theirs.qnGetAddressBook("tenancy-book")).toEqual([]);
      expect(await theirs.qnContainsAddressBookItems("tenancy-book", ["0xabc"])).toEqual([false]);
      expect(await theirs.qnGetSet("tenancy-value")).toBeNull();
      expect(await theirs.qnDeleteSet("tenancy-value")).toBe(false);
      expect((await theirs.itemsSnapshot("tenancy-book", null)).items).toEqual([]);
    } finally {
      await database.$client.end();
    }
    await owner.client.gqlOk(`mutation { abortKvUpload(uploadId: "${uploadId}") { success } }`);
  });
});

async function putPart(url: string, body: string | Uint8Array<ArrayBuffer>) {
  return fetch(url, { method: "PUT", body, headers: { "content-type": "application/octet-stream" } });
}

async function partUrl(owner: TestUser, uploadId: string, partNumber: number) {
  const { kvUploadPartUrl } = await owner.client.gqlOk<{ kvUploadPartUrl: { url: string; partNumber: number } }>(
    "mutation($input: KvUploadPartInput!) { kvUploadPartUrl(input: $input) { url partNumber expiresAt } }",
    { input: { uploadId, partNumber } },
  );
  return kvUploadPartUrl.url;
}

describe("multipart upload", () => {
  it("adds 200,000 addresses in parts, one of them failed and sent again, in one transaction", async () => {
    const owner = await signIn(ctx.app, "demo@nodeplane.local", DEMO_PASSWORD);
    const { initiateAddressBookUpload: upload } = await owner.client.gqlOk<{
      initiateAddressBookUpload: { uploadId: string; key: string; bucket: string };
    }>('mutation { initiateAddressBookUpload(input: { key: "big-book" }) { uploadId key bucket } }');
    expect(upload).toMatchObject({ key: "big-book", bucket: "local" });

    // 200,000 addresses, then 1,000 of them again (a set keeps one of each), CRLF line ends.
    const lines = Array.from({ length: 200_000 }, (_, i) => address(i + 1));
    for (let i = 0; i < 1000; i++) lines.push(address(i + 1));
    const file = Buffer.from(`${lines.join("\r\n")}\r\n`);
    const partSize = 1024 * 1024;
    const parts = Math.ceil(file.length / partSize);
    expect(parts).toBeGreaterThan(5);

    for (let n = 1; n <= parts; n++) {
      const bytes = file.subarray((n - 1) * partSize, n * partSize);
      if (n === 3) {
        // Part 3 fails on the way: its connection breaks after half of it was sent.
        const url = await partUrl(owner, upload.uploadId, n);
        const half = bytes.subarray(0, bytes.length / 2);
        const broken = new ReadableStream({
          start(controller) {
            controller.enqueue(half);
            setTimeout(() => controller.error(new Error("connection lost")), 50);
          },
        });
        await expect(
          fetch(url, { method: "PUT", body: broken, duplex: "half" } as RequestInit & { duplex: "half" }),
        ).rejects.toThrow();
        // Nothing of it was kept.
        const dir = join(ctx.app.dataDir, "kv-uploads", upload.uploadId);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(readdirSync(dir).filter((name) => name.startsWith("part-00003"))).toEqual([]);
      }
      const response = await putPart(await partUrl(owner, upload.uploadId, n), new Uint8Array(bytes));
      expect(response.status, `part ${n}`).toBe(200);
      expect(response.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    }

    const { completeKvUpload } = await owner.client.gqlOk<{ completeKvUpload: unknown }>(
      `mutation($id: ID!) { completeKvUpload(uploadId: $id) { ${ADD} } }`,
      { id: upload.uploadId },
    );
    expect(completeKvUpload).toEqual({ success: true, key: "big-book", addedCount: 200_000 });
    const book = await bookDetail(owner.client, "big-book", 2);
    expect(book.data?.addressBook.addressBook.numberOfAddresses).toBe(200_000);
    expect(book.data?.addressBook.items.edges.map((e) => e.node.item)).toEqual([address(1), address(2)]);
    expect(existsSync(join(ctx.app.dataDir, "kv-uploads", upload.uploadId))).toBe(false);
    const twice = await owner.client.gql(`mutation { completeKvUpload(uploadId: "${upload.uploadId}") { success } }`);
    expect(twice.errors?.[0].extensions?.code).toBe("NOT_FOUND");

    const database = db();
    try {
      const helpers = kvFilterHelpers(database)(owner.viewer.id);
      expect(await helpers.qnContainsAddressBookItems("big-book", [address(199_999), address(200_001)])).toEqual([
        true,
        false,
      ]);
    } finally {
      await database.$client.end();
    }
  }, 120_000);

  it("names a bad line and adds nothing; abort deletes the parts; a wrong signature is refused", async () => {
    const owner = await signUp(ctx.app);
    const { initiateListUpload: upload } = await owner.client.gqlOk<{ initiateListUpload: { uploadId: string } }>(
      'mutation { initiateListUpload(input: { key: "todo" }) { uploadId key bucket } }',
    );
    const url = await partUrl(owner, upload.uploadId, 1);
    const tampered = url.replace(/signature=[^&]+/, "signature=AAAA");
    expect((await putPart(tampered, "a\n")).status).toBe(403);
    const otherPart = url.replace("/parts/1?", "/parts/2?");
    expect((await putPart(otherPart, "a\n")).status).toBe(403);
    const expired = url.replace(/expires=\d+/, "expires=1000");
    expect((await putPart(expired, "a\n")).status).toBe(403);

    expect((await putPart(url, `one\ntwo,three\n${"z".repeat(300)}\nfour\n`)).status).toBe(200);
    const refused = await owner.client.gql(`mutation { completeKvUpload(uploadId: "${upload.uploadId}") { success } }`);
    expect(refused.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    expect(refused.errors?.[0].message).toBe("Line 3: An item is at most 256 characters.");
    expect((await owner.client.gql('{ list(key: "todo") { list { key } } }')).errors?.[0].extensions?.code).toBe(
      "NOT_FOUND",
    );

    const dir = join(ctx.app.dataDir, "kv-uploads", upload.uploadId);
    expect(readFileSync(join(dir, "part-00001"), "utf8")).toContain("two,three");
    const aborted = await owner.client.gqlOk<{ abortKvUpload: { success: boolean } }>(
      `mutation { abortKvUpload(uploadId: "${upload.uploadId}") { success message } }`,
    );
    expect(aborted.abortKvUpload.success).toBe(true);
    expect(existsSync(dir)).toBe(false);
    expect((await putPart(url, "late\n")).status).toBe(404);
    const completeAfter = await owner.client.gql(
      `mutation { completeKvUpload(uploadId: "${upload.uploadId}") { success } }`,
    );
    expect(completeAfter.errors?.[0].extensions?.code).toBe("NOT_FOUND");
  });

  it("into a list keeps the file's order and duplicates; an address book key refuses a list upload", async () => {
    const owner = await signUp(ctx.app);
    const { initiateListUpload: upload } = await owner.client.gqlOk<{ initiateListUpload: { uploadId: string } }>(
      'mutation { initiateListUpload(input: { key: "ordered" }) { uploadId } }',
    );
    expect((await putPart(await partUrl(owner, upload.uploadId, 2), "c,a\n")).status).toBe(200);
    expect((await putPart(await partUrl(owner, upload.uploadId, 1), "b\na\n")).status).toBe(200);
    const done = await owner.client.gqlOk<{ completeKvUpload: { addedCount: number } }>(
      `mutation { completeKvUpload(uploadId: "${upload.uploadId}") { addedCount } }`,
    );
    expect(done.completeKvUpload.addedCount).toBe(4);
    const { list } = await listDetail(owner.client, { key: "ordered" });
    expect(list.items.edges.map((e) => e.node.item)).toEqual(["b", "a", "c", "a"]);

    await owner.client.gqlOk('mutation { createAddressBook(input: { key: "book" }) { success } }');
    const wrong = await owner.client.gql('mutation { initiateListUpload(input: { key: "book" }) { uploadId } }');
    expect(wrong.errors?.[0].extensions?.code).toBe("CONFLICT");
  });
});

describe("multipart upload: what a careless or hostile client sends", () => {
  const initiate = async (owner: TestUser, key: string) =>
    (
      await owner.client.gqlOk<{ initiateListUpload: { uploadId: string } }>(
        "mutation($key: String!) { initiateListUpload(input: { key: $key }) { uploadId } }",
        { key },
      )
    ).initiateListUpload.uploadId;
  const complete = (owner: TestUser, uploadId: string) =>
    owner.client.gql<{ completeKvUpload: { addedCount: number } }>(
      "mutation($id: ID!) { completeKvUpload(uploadId: $id) { success key addedCount } }",
      { id: uploadId },
    );

  it("a missing part is named on complete and nothing is added; once sent, complete adds every line", async () => {
    const owner = await signUp(ctx.app);
    const uploadId = await initiate(owner, "gappy");
    expect((await putPart(await partUrl(owner, uploadId, 1), "a\nb\n")).status).toBe(200);
    expect((await putPart(await partUrl(owner, uploadId, 3), "e\nf\n")).status).toBe(200);
    const refused = await complete(owner, uploadId);
    expect(refused.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    expect(refused.errors?.[0].message).toContain("Part 2 of this upload was not received");
    expect((await owner.client.gql('{ list(key: "gappy") { list { key } } }')).errors?.[0].extensions?.code).toBe(
      "NOT_FOUND",
    );
    expect((await putPart(await partUrl(owner, uploadId, 2), "c\nd\n")).status).toBe(200);
    expect((await complete(owner, uploadId)).data?.completeKvUpload.addedCount).toBe(6);
  });

  it("a file declared past 64 MiB at initiate is refused before any part is sent, naming the limit and what to do", async () => {
    const owner = await signUp(ctx.app);
    const initiateSized = (size: number) =>
      owner.client.gql<{ initiateListUpload: { uploadId: string } }>(
        "mutation($input: InitiateKvUploadInput!) { initiateListUpload(input: $input) { uploadId } }",
        { input: { key: "big", size } },
      );
    const refused = await initiateSized(65 * 1024 * 1024);
    expect(refused.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/size" }] });
    expect(refused.errors?.[0].message).toBe(
      "This file is 65.0 MiB; an upload is at most 64 MiB. Split the file into files of 64 MiB or less and upload each into the same key.",
    );
    // Past GraphQL's Int (2 GiB), in the same words.
    expect((await initiateSized(3 * 1024 ** 3)).errors?.[0].message).toContain("This file is 3,072.0 MiB;");
    // No upload was opened by either, so none counts against the plan's open uploads.
    const { kvUploads } = await owner.client.gqlOk<{ kvUploads: { totalCount: number } }>(
      "{ kvUploads { totalCount } }",
    );
    expect(kvUploads.totalCount).toBe(0);
    const atLimit = await initiateSized(64 * 1024 * 1024);
    expect(atLimit.errors).toBeUndefined();
    await owner.client.gqlOk(
      `mutation { abortKvUpload(uploadId: "${atLimit.data?.initiateListUpload.uploadId}") { success } }`,
    );
  });

  it("parts are refused as they arrive once the upload would pass 64 MiB, and a part over 16 MiB at once", async () => {
    const owner = await signUp(ctx.app);
    const uploadId = await initiate(owner, "heavy");
    const sixteen = new Uint8Array(16 * 1024 * 1024).fill(0x61);
    for (let n = 1; n <= 4; n++) expect((await putPart(await partUrl(owner, uploadId, n), sixteen)).status).toBe(200);
    // A part sent again replaces itself: it does not count twice.
    expect((await putPart(await partUrl(owner, uploadId, 4), sixteen)).status).toBe(200);
    const fifth = await putPart(await partUrl(owner, uploadId, 5), "b\n");
    expect(fifth.status).toBe(413);
    expect(await fifth.json()).toEqual({
      error:
        "An upload is at most 64 MiB. Split the file into files of 64 MiB or less and upload each into the same key.",
      code: "BAD_USER_INPUT",
    });
    expect(readdirSync(join(ctx.app.dataDir, "kv-uploads", uploadId)).sort()).toEqual([
      "part-00001",
      "part-00002",
      "part-00003",
      "part-00004",
    ]);
    const oversized = await putPart(await partUrl(owner, uploadId, 6), new Uint8Array(16 * 1024 * 1024 + 1));
    expect(oversized.status).toBe(413);
    expect(await oversized.json()).toEqual({ error: "A part is at most 16 MiB.", code: "BAD_USER_INPUT" });
    await owner.client.gqlOk(`mutation { abortKvUpload(uploadId: "${uploadId}") { success } }`);
  }, 60_000);

  it("a file of 300,000 copies of one address makes a set of one; as a list it is refused past the plan", async () => {
    const owner = await signUp(ctx.app);
    const file = "0x00000000000000000000000000000000000000aa\n".repeat(300_000);
    const { initiateAddressBookUpload: book } = await owner.client.gqlOk<{
      initiateAddressBookUpload: { uploadId: string };
    }>('mutation { initiateAddressBookUpload(input: { key: "one" }) { uploadId } }');
    expect((await putPart(await partUrl(owner, book.uploadId, 1), file)).status).toBe(200);
    expect((await complete(owner, book.uploadId)).data?.completeKvUpload.addedCount).toBe(1);
    const listId = await initiate(owner, "many");
    expect((await putPart(await partUrl(owner, listId, 1), file)).status).toBe(200);
    expect((await complete(owner, listId)).errors?.[0].message).toBe(
      "The file holds more than 10,000 items; your plan allows 10,000 per list or address book. Upload a smaller file, or upgrade your plan.",
    );
  }, 60_000);

  it("items far past the plan are refused before any is written, and a new key when the plan has none left at initiate", async () => {
    const owner = await signUp(ctx.app);
    const uploadId = await initiate(owner, "flood");
    // 1,000,000 items on the Free plan (10,000 per key): inserting them all before refusing took ~25 s.
    const file = Array.from({ length: 1_000_000 }, (_, i) => `i${i}`).join("\n");
    expect((await putPart(await partUrl(owner, uploadId, 1), file)).status).toBe(200);
    const started = Date.now();
    const refused = await complete(owner, uploadId);
    expect(refused.errors?.[0].extensions?.code).toBe("CONFLICT");
    expect(refused.errors?.[0].message).toBe(
      "The file holds more than 10,000 items; your plan allows 10,000 per list or address book. Upload a smaller file, or upgrade your plan.",
    );
    expect(Date.now() - started).toBeLessThan(8000);
    expect(
      (await owner.client.gqlOk<{ lists: { totalCount: number } }>("{ lists { totalCount } }")).lists.totalCount,
    ).toBe(0);

    for (let i = 0; i < 10; i++) expect((await createList(owner.client, { key: `k${i}` })).errors).toBeUndefined();
    const full = await owner.client.gql('mutation { initiateListUpload(input: { key: "eleventh" }) { uploadId } }');
    expect(full.errors?.[0].extensions?.code).toBe("CONFLICT");
    expect(full.errors?.[0].message).toContain("Your plan allows 10 keys");
    // Into a key it has, an upload may still begin.
    expect((await owner.client.gql('mutation { initiateListUpload(input: { key: "k0" }) { uploadId } }')).errors).toBe(
      undefined,
    );
  }, 60_000);
});

describe("bad arguments are named, never INTERNAL", () => {
  it("items and itemsText together; a cursor holding NUL", async () => {
    const owner = await signUp(ctx.app);
    const both = await createList(owner.client, { key: "both", items: ["a"], itemsText: "b" });
    expect(both.errors?.[0].extensions?.fields).toEqual([
      { pointer: "/itemsText", message: "Give items or itemsText, not both." },
    ]);
    await createList(owner.client, { key: "l", items: ["a"] });
    await owner.client.gqlOk('mutation { createAddressBook(input: { key: "b", items: ["0x1"] }) { success } }');
    const nul = Buffer.from(JSON.stringify(["a\u0000"])).toString("base64url");
    for (const query of [
      "query($after: String) { values(after: $after) { totalCount } }",
      "query($after: String) { lists(after: $after) { totalCount } }",
      'query($after: String) { addressBook(key: "b", after: $after) { items { totalCount } } }',
    ]) {
      const answer = await owner.client.gql(query, { after: nul });
      expect(answer.errors?.[0].extensions, query).toMatchObject({
        code: "BAD_USER_INPUT",
        fields: [{ pointer: "/after", message: "This cursor is not valid." }],
      });
    }
  });
});

describe("helpers for filters and functions", () => {
  it("read and write the store, version snapshots, and meter writes only", async () => {
    const owner = await signUp(ctx.app);
    const database = db();
    try {
      const noon = new Date("2026-11-25T12:00:00Z");
      const helpers = kvFilterHelpers(database, () => noon)(owner.viewer.id);
      expect(await helpers.itemsSnapshot("watch", null)).toEqual({ version: 0, items: [] });
      expect(await helpers.itemsSnapshot("watch", 0)).toEqual({ version: 0, items: null });
      expect(await helpers.qnAddListItem("watch", "0xaa")).toBe(true);
      expect(await helpers.qnUpsertList("watch", { add_items: ["0xbb", "0xcc"], remove_items: ["0xaa"] })).toBe(true);
      expect(await helpers.qnGetList("watch")).toEqual(["0xbb", "0xcc"]);
      expect(await helpers.qnContainsListItems("watch", ["0xcc", "0xaa"])).toEqual([true, false]);
      const first = await helpers.itemsSnapshot("watch", null);
      expect(first.items).toEqual(["0xbb", "0xcc"]);
      expect(await helpers.itemsSnapshot("watch", first.version)).toEqual({ version: first.version, items: null });
      expect(await helpers.qnRemoveListItem("watch", "0xbb")).toBe(true);
      expect(await helpers.qnRemoveListItem("watch", "0xbb")).toBe(false);
      const second = await helpers.itemsSnapshot("watch", first.version);
      expect(second.version).not.toBe(first.version);
      expect(second.items).toEqual(["0xcc"]);
      expect(await helpers.qnGetAllLists()).toEqual(["watch"]);

      expect(await helpers.qnAddSet("colour", "red")).toBe(true);
      expect(await helpers.qnBulkSets({ add_sets: { size: "L", shape: "round" }, delete_sets: ["colour"] })).toBe(true);
      expect(await helpers.qnGetSet("colour")).toBeNull();
      expect(await helpers.qnGetSet("size")).toBe("L");
      expect(await helpers.qnGetAllSets()).toEqual(["shape", "size"]);
      expect(await helpers.qnDeleteSet("shape")).toBe(true);
      expect(await helpers.qnDeleteList("watch")).toBe(true);
      expect(await helpers.qnDeleteList("watch")).toBe(false);
      // A list made again under the key never reuses a version seen before.
      await helpers.qnAddListItem("watch", "0xdd");
      const third = await helpers.itemsSnapshot("watch", second.version);
      expect(third.version).toBeGreaterThan(second.version);
      expect(third.items).toEqual(["0xdd"]);

      // 10 calls wrote: add 1; upsert +2 −1; remove 1, then 0; addSet 1; bulk +2 −1; deleteSet 1; deleteList 1, then 0;
      // add 1. Each is billed what it changed, at least one operation: 12 changed, and 2 calls changed nothing.
      const day = { start: new Date("2026-11-25T00:00:00Z"), end: new Date("2026-11-26T00:00:00Z") };
      expect(await kvStore.helperWrites(database, owner.viewer.id, day.start, day.end)).toEqual({
        calls: 10,
        operations: 14,
      });
      // Limits hold for helpers too (the Free plan's 10 keys; 2 are used: size and watch).
      for (let i = 0; i < 8; i++) await helpers.qnAddSet(`k${i}`, "v");
      await expect(helpers.qnAddListItem("one-more", "x")).rejects.toThrow("Your plan allows 10 keys");
    } finally {
      await database.$client.end();
    }
  });

  it("answer what no key or item could hold in words, never with the database's SQL", async () => {
    const owner = await signUp(ctx.app);
    const database = db();
    try {
      const helpers = kvFilterHelpers(database)(owner.viewer.id);
      // Reads of a key no write could make find nothing.
      expect(await helpers.qnGetSet("k\u0000")).toBeNull();
      expect(await helpers.qnGetList("k\u0000")).toEqual([]);
      expect(await helpers.qnGetAddressBook("a b")).toEqual([]);
      expect(await helpers.qnContainsListItems("k\u0000", ["a"])).toEqual([false]);
      expect(await helpers.itemsSnapshot("k\u0000", null)).toEqual({ version: 0, items: [] });
      await helpers.qnAddListItem("watch", "a");
      expect(await helpers.qnContainsListItems("watch", ["a", "a\u0000"])).toEqual([true, false]);
      // Writes are refused naming what is wrong; a NUL value used to answer the INSERT's text and parameters.
      const refusals: [string, () => Promise<unknown>, string][] = [
        [
          "qnAddSet",
          () => helpers.qnAddSet("k1", "a\u0000b"),
          "qnLib.qnAddSet: A value cannot contain NUL characters.",
        ],
        ["qnBulkSets", () => helpers.qnBulkSets({ add_sets: { k2: "v\u0000" } }), "NUL"],
        ["qnAddSet key", () => helpers.qnAddSet("k\u0000", "v"), "qnLib.qnAddSet: A key is 1 to 128 letters"],
        ["qnDeleteList", () => helpers.qnDeleteList("k\u0000"), "qnLib.qnDeleteList: A key is 1 to 128 letters"],
        ["qnDeleteSet", () => helpers.qnDeleteSet("k\u0000"), "qnLib.qnDeleteSet: A key is"],
        [
          "qnAddListItem",
          () => helpers.qnAddListItem("watch", "x\u0000"),
          "qnLib.qnAddListItem: An item cannot contain",
        ],
        // Half a surrogate pair (user code can make one) is refused, not stored as U+FFFD.
        [
          "qnAddSet surrogate",
          () => helpers.qnAddSet("k3", "a\ud800"),
          "qnLib.qnAddSet: A value cannot contain an unpaired UTF-16 surrogate",
        ],
        [
          "qnUpsertList surrogate",
          () => helpers.qnUpsertList("watch", { add_items: ["\udc00"] }),
          "qnLib.qnUpsertList: An item cannot contain an unpaired UTF-16 surrogate",
        ],
      ];
      for (const [name, run, words] of refusals) {
        const error = await run().then(
          () => null,
          (e: Error) => e,
        );
        expect(error?.message, name).toContain(words);
        expect(error?.message, name).not.toMatch(/Failed query|insert into|select |params:/);
      }
      expect(await helpers.qnBulkSets({ delete_sets: ["k\u0000", "nothing"] })).toBe(true);
    } finally {
      await database.$client.end();
    }
  });

  it("the filter template checks a batch's transfers against an address book in one look-up", async () => {
    const owner = await signUp(ctx.app);
    const watched = address(0xbeef);
    await owner.client.gqlOk(
      `mutation { createAddressBook(input: { key: "watched_addresses", items: ["${watched}"] }) { success } }`,
    );
    const templates = JSON.parse(
      readFileSync(join(import.meta.dirname, "../../schemas/catalogue/filter-templates.json"), "utf8"),
    ) as { templates: { id: string; filterFunction: string }[] };
    const template = templates.templates.find((t) => t.id === "address-book-transfers");
    expect(template).toBeDefined();
    const pad = (hex: string) => hex.replace(/^0x/, "").padStart(64, "0");
    const tx = (hash: string, fields: Record<string, string | null>) => ({
      hash,
      blockNumber: "0x10",
      from: address(1),
      to: address(2),
      value: "0x0",
      input: "0x",
      ...fields,
    });
    const block = {
      number: "0x10",
      transactions: [
        tx("0x01", { value: "0x5", to: watched }),
        tx("0x02", { value: "0x5" }),
        tx("0x03", { to: address(0x70c), input: `0xa9059cbb${pad(watched)}${pad("0x64")}` }),
        tx("0x04", { to: address(0x70c), input: `0x23b872dd${pad(watched)}${pad(address(5))}${pad("0x7")}` }),
        tx("0x05", { to: watched }),
      ],
    };
    const database = db();
    const calls: string[] = [];
    try {
      const helpers = kvFilterHelpers(database)(owner.viewer.id);
      const counted = new Proxy(helpers, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            calls.push(String(name));
            return value.apply(target, args);
          };
        },
      });
      const outcome = await testFilter(
        { source: template?.filterFunction ?? "", version: "V5", helpers: counted, owner: null },
        { data: JSON.stringify([block]), metadata: {} },
      );
      expect(outcome.ok).toBe(true);
      const result = outcome.ok
        ? (JSON.parse(outcome.resultJson ?? "null") as { hash: string; kind: string; value: string }[])
        : [];
      expect(result.map((r) => [r.hash, r.kind, r.value])).toEqual([
        ["0x01", "NATIVE", "5"],
        ["0x03", "ERC20", "100"],
        ["0x04", "ERC20", "7"],
      ]);
      // One call into the store for the whole batch: the membership check itself, or (as the V8 sandbox
      // does) one snapshot of the address book it then keeps beside the isolate.
      expect(calls).toHaveLength(1);
      expect(["qnContainsAddressBookItems", "itemsSnapshot"]).toContain(calls[0]);
    } finally {
      await database.$client.end();
    }
  });
  it("a running filter sees a change made to its address book after it started", async () => {
    const owner = await signUp(ctx.app);
    await owner.client.gqlOk('mutation { createAddressBook(input: { key: "live", items: ["0xaa"] }) { success } }');
    const database = db();
    const filter = await createFilter({
      source: 'async function main(stream) { return await qnLib.qnContainsAddressBookItems("live", stream.data); }',
      version: "V5",
      helpers: kvFilterHelpers(database)(owner.viewer.id),
      owner: owner.viewer.id,
    });
    try {
      const run = async () => {
        const outcome = await filter.run({ data: JSON.stringify(["0xaa", "0xbb"]), metadata: {} });
        if (!outcome.ok) throw new Error(JSON.stringify(outcome.error));
        return JSON.parse(outcome.resultJson ?? "null");
      };
      expect(await run()).toEqual([true, false]);
      await owner.client.gqlOk('mutation { addAddressBookItems(input: { key: "live", items: ["0xbb"] }) { success } }');
      expect(await run()).toEqual([true, true]);
      await owner.client.gqlOk(
        'mutation { removeAddressBookItems(input: { key: "live", items: ["0xaa"] }) { success } }',
      );
      expect(await run()).toEqual([false, true]);
      await owner.client.gqlOk('mutation { deleteAddressBook(key: "live") { success } }');
      expect(await run()).toEqual([false, false]);
    } finally {
      filter.dispose();
      await database.$client.end();
    }
  });
});
