// The endpoints list from the process's cache is the list from SQL: over random accounts (a fixed seed),
// every filter, order and page size is paged to its end both ways, and each page's rows, tags, total and
// cursors must be equal. Labels tie when lowered, timestamps tie to the millisecond, and search text
// holds LIKE's special characters, so the orders' tie-breaks and the search's escaping are compared too.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../server/domains/account/tables.ts";
import { EndpointListCache } from "../../server/domains/endpoints/list-cache.ts";
import { archive, listEndpoints, updateLabel } from "../../server/domains/endpoints/service.ts";
import type { EndpointOrder } from "../../server/domains/endpoints/store.ts";
import { endpoints, endpointTags, tags } from "../../server/domains/endpoints/tables.ts";
import { type Db, openDatabase, runMigrations } from "../../server/platform/db/index.ts";
import { DomainEvents } from "../../server/platform/events.ts";
import { encodeCursor } from "../../server/platform/paging.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/** mulberry32: a small PRNG, so a failure reproduces. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(20261125);
const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];

const LABELS = [null, null, "Alpha", "alpha", "ALPHA", "beta app", "Beta_app", "50% off", "a\\b", "zeta", "Émile", ""];
const NAMES = ["calm-river-1000", "icy-peak-2000", "bold-dune-3000", "Wild-Wave-4000"];
const NETWORKS = ["ethereum-sepolia", "ethereum-mainnet", "polygon-amoy"];
const STATUSES = ["ACTIVE", "ACTIVE", "PAUSED", "ARCHIVED", "LIMIT_REACHED"];
const ORDERS: EndpointOrder[] = ["CREATED_AT_DESC", "CREATED_AT_ASC", "LABEL_ASC", "LABEL_DESC"];
const SEARCHES = [null, "", "  ", "alpha", "ALP", "app", "_", "%", "\\", "-4000", "sepolia", "river", "nothing"];
const FILTER_STATUSES = [null, "ACTIVE", "PAUSED", "ARCHIVED"];
const PAGE_SIZES = [1, 4, 100];

let database: TestDatabase;
let db: Db;
const events = new DomainEvents();
let cache: EndpointListCache;
let accountId: string;
let tagIds: string[];

/** An account with `n` random endpoints and four tags linked at random. */
async function randomAccount(n: number) {
  const [{ id }] = await db.insert(accounts).values({}).returning({ id: accounts.id });
  const made = await db
    .insert(tags)
    .values(["red", "Green", "blue", "Ünïcode"].map((label) => ({ accountId: id, label })))
    .returning({ id: tags.id });
  const base = Date.UTC(2026, 0, 1);
  const rows = await db
    .insert(endpoints)
    .values(
      Array.from({ length: n }, (_, i) => ({
        accountId: id,
        exId: `ex${i}${Math.floor(next() * 1e9)}`,
        name: pick(NAMES),
        label: pick(LABELS),
        chain: "ethereum",
        network: pick(NETWORKS),
        status: pick(STATUSES),
        // A few distinct milliseconds, so many endpoints share one.
        createdAt: new Date(base + Math.floor(next() * 8)),
      })),
    )
    .returning({ id: endpoints.id });
  const links = rows.flatMap((row) =>
    made.filter(() => next() < 0.35).map((tag) => ({ endpointId: row.id, tagId: tag.id })),
  );
  if (links.length > 0) await db.insert(endpointTags).values(links);
  return { id, tagIds: made.map((tag) => tag.id) };
}

beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url, 4);
  await runMigrations(db);
  ({ id: accountId, tagIds } = await randomAccount(40));
  // Another account's endpoints are never listed.
  await randomAccount(10);
  cache = new EndpointListCache(db, events);
});

afterAll(async () => {
  await db?.$client.end();
  await database?.drop();
});

type Args = Parameters<typeof listEndpoints>[3];

/** A page from the cache (`lists`) or from SQL (null), without the check of whether it still holds. */
async function listed(lists: EndpointListCache | null, args: Args) {
  const { isCurrent: _, ...page } = await listEndpoints(db, lists, accountId, args);
  return page;
}

/** Every page of the list, following endCursor, from the cache (`lists`) or from SQL (null). */
async function allPages(lists: EndpointListCache | null, args: Args) {
  const pages = [];
  let after: string | null = null;
  for (let i = 0; i < 50; i++) {
    const page = await listed(lists, { ...args, after });
    pages.push(page);
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  return pages;
}

const tagFilters = () => [null, [], [tagIds[0]], [tagIds[1], tagIds[2]], [tagIds[3].toUpperCase()]];

describe("the endpoints list cache", () => {
  it("pages every filter, order and size as SQL does", async () => {
    let compared = 0;
    for (const orderBy of ORDERS)
      for (const search of SEARCHES)
        for (const status of FILTER_STATUSES)
          for (const tagFilter of tagFilters())
            for (const first of PAGE_SIZES) {
              const args = { orderBy, search, status, tagIds: tagFilter, first };
              const filter = { search, status, tagIds: tagFilter };
              // The cache answers these itself, rather than leaving them to SQL.
              expect(await cache.page(accountId, filter, orderBy, first + 1, null)).not.toBeNull();
              const [fromCache, fromSql] = await Promise.all([allPages(cache, args), allPages(null, args)]);
              expect(fromCache, JSON.stringify(args)).toEqual(fromSql);
              compared += fromSql.length;
            }
    expect(compared).toBeGreaterThan(ORDERS.length * SEARCHES.length * FILTER_STATUSES.length * 5 * PAGE_SIZES.length);
  }, 120_000);

  it("gives the same page for cursors it leaves to SQL", async () => {
    const unknownId = "00000000-0000-4000-8000-000000000000";
    const cursors = [
      encodeCursor(["alpha", unknownId]),
      encodeCursor(["not the row's key", unknownId]),
      encodeCursor(["2026-01-01T00:00:00.003Z", unknownId]),
      encodeCursor(["2026-01-01 00:00:00.003+00", unknownId]),
    ];
    for (const orderBy of ORDERS)
      for (const after of cursors)
        for (const search of [null, "é", "Émile"]) {
          const ask = (lists: EndpointListCache | null) =>
            listed(lists, { orderBy, after, search, first: 5 }).catch((error: Error) => error.message);
          expect(await ask(cache), JSON.stringify({ orderBy, after, search })).toEqual(await ask(null));
        }
  });

  it("does not keep what a load read before a drop", async () => {
    const archived = { first: 100, status: "ARCHIVED" };
    const [target] = (await listed(null, { first: 1 })).edges;
    events.emit("endpoints.listChanged", { accountId });
    const loading = listed(cache, archived);
    // The change's event arrives while the load is under way; the change is in the database from then on.
    events.emit("endpoint.changed", { accountId, endpointId: target.node.endpoint.id });
    const stale = await loading;
    await db.update(endpoints).set({ status: "ARCHIVED" }).where(eq(endpoints.id, target.node.endpoint.id));
    const fresh = await listed(cache, archived);
    expect(fresh.totalCount).toBe(stale.totalCount + 1);
    expect(fresh).toEqual(await listed(null, archived));
  });

  it("drops an account's list when the service changes its endpoints", async () => {
    const archived = { first: 100, status: "ARCHIVED" };
    const before = await listed(cache, archived);
    const [target] = (await listed(null, { first: 1 })).edges;
    await archive(db, events, accountId, target.node.endpoint.id);
    const after = await listed(cache, archived);
    expect(after.totalCount).toBe(before.totalCount + 1);
    expect(after).toEqual(await listed(null, archived));
  });

  it("says whether a page from the cache still holds, until the account's endpoints change", async () => {
    const fromCache = await listEndpoints(db, cache, accountId, { first: 5 });
    const fromSql = await listEndpoints(db, null, accountId, { first: 5 });
    expect(fromSql.isCurrent).toBeNull();
    expect(fromCache.isCurrent?.()).toBe(true);
    const [target] = fromCache.edges;
    await updateLabel(db, events, accountId, target.node.endpoint.id, "relabelled");
    expect(fromCache.isCurrent?.()).toBe(false);
    expect((await listEndpoints(db, cache, accountId, { first: 5 })).isCurrent?.()).toBe(true);
  });
});
