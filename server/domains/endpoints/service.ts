import { randomBytes, randomInt } from "node:crypto";
import type { Db, Executor } from "../../platform/db/index.ts";
import { badInput, conflict, foundOr, notFound } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { isUuid } from "../../platform/ids.ts";
import { connectionWithCursors, cursorArgument, encodeCursor, pageSize } from "../../platform/paging.ts";
import { lockedSubscription } from "../account/service.ts";
import { findNetwork, isSelectable, needsUpgrade } from "../catalogue/networks.ts";
import type { EndpointListCache } from "./list-cache.ts";
import * as store from "./store.ts";

/** Ids of the accounts whose status is `status` (the proxy's meter asks which are at their limit). */
export const accountsWithStatus = (db: Executor, status: string) => store.accountsWithStatus(db, status);

export type EndpointStatus =
  | "ACTIVE"
  | "ARCHIVED"
  | "CANCELED"
  | "DISABLED"
  | "LIMIT_REACHED"
  | "PAUSED"
  | "SUSPENDED"
  | "TERMINATED";

/**
 * Hooks other areas attach to endpoint creation, run inside its transaction (security gives a new
 * endpoint its first token here). What a hook returns is added to the creation's answer only, for
 * values shown once, such as that token.
 */
export type EndpointCreatedHook = (
  tx: Parameters<Parameters<Db["transaction"]>[0]>[0],
  endpoint: store.EndpointRow,
) => Promise<Record<string, unknown> | undefined>;

const adjectives: readonly string[] = [
  "amber",
  "bold",
  "calm",
  "crimson",
  "dawn",
  "eager",
  "frosty",
  "gentle",
  "hidden",
  "icy",
  "jolly",
  "lively",
  "misty",
  "noble",
  "proud",
  "quiet",
  "rapid",
  "silent",
  "sunny",
  "wild",
];
const nouns: readonly string[] = [
  "brook",
  "cedar",
  "dune",
  "ember",
  "field",
  "glade",
  "harbor",
  "island",
  "meadow",
  "morning",
  "peak",
  "pine",
  "river",
  "shadow",
  "sky",
  "stone",
  "thunder",
  "valley",
  "wave",
  "wind",
];

const pick = <T>(list: readonly T[]) => list[randomInt(list.length)];
const generateName = () => `${pick(adjectives)}-${pick(nouns)}-${randomInt(1000, 10000)}`;

export async function getEndpointOrFail(db: Executor, accountId: string, id: string) {
  return foundOr(isUuid(id) ? await store.getEndpoint(db, accountId, id) : undefined, "The endpoint");
}

/** An endpoint named by its exId (as the spec's calls do) or by its id. */
export async function endpointByKey(db: Db, accountId: string, key: string) {
  if (isUuid(key)) return getEndpointOrFail(db, accountId, key);
  return foundOr(await store.getEndpointByExId(db, accountId, key), "The endpoint");
}

export async function createEndpoint(
  db: Db,
  events: DomainEvents,
  hooks: EndpointCreatedHook[],
  accountId: string,
  input: { chain: string; network: string; label?: string },
) {
  const found = findNetwork(input.network);
  if (!found || found.chain.chain !== input.chain) {
    throw badInput([{ pointer: "/network", message: `${input.network} is not a network of ${input.chain}.` }]);
  }
  if (!isSelectable(found.network)) {
    throw badInput([{ pointer: "/network", message: `${found.network.label} is not available yet.` }]);
  }
  const created = await db.transaction(async (tx) => {
    // Locking the subscription row serialises concurrent creations against the limit.
    const subscription = foundOr(await lockedSubscription(tx, accountId), "The subscription");
    if (needsUpgrade(found.network, subscription.plan.priceCents)) {
      throw badInput([{ pointer: "/network", message: `${found.network.label} needs a paid plan.` }]);
    }
    await assertEndpointRoom(tx, accountId, subscription, "create");
    const endpoint = await store.insertEndpoint(tx, accountId, {
      exId: randomBytes(12).toString("hex"),
      name: generateName(),
      label: input.label?.trim() || null,
      chain: input.chain,
      network: input.network,
      status: "ACTIVE",
    });
    let shownOnce: Record<string, unknown> = {};
    for (const hook of hooks) shownOnce = { ...shownOnce, ...(await hook(tx, endpoint)) };
    return { endpoint, shownOnce };
  });
  await events.emitAndWait("endpoint.changed", { accountId, endpointId: created.endpoint.id });
  return created;
}

type LockedSubscription = NonNullable<Awaited<ReturnType<typeof lockedSubscription>>>;

/**
 * The plan's endpoint limit, the one place it is applied: endpoints that are not archived count against
 * it, so a creation past it is refused; after a downgrade an account may hold more than its limit, of
 * which only the limit serve (billing pauses the others), so resuming one is refused while the serving
 * ones fill the limit. The caller holds the subscription row locked (creations serialise on it).
 */
async function assertEndpointRoom(
  tx: Executor,
  accountId: string,
  { subscription, plan }: LockedSubscription,
  action: "create" | "resume",
) {
  const live = await store.liveEndpoints(tx, accountId);
  const counted = action === "create" ? live : live.filter((e) => e.status !== "PAUSED");
  if (counted.length >= subscription.endpointLimit) {
    const advice = action === "create" ? "archive one or upgrade to add more" : "pause or archive another, or upgrade";
    throw conflict(`Your ${plan.prettyName} plan allows ${subscription.endpointLimit} endpoints; ${advice}.`);
  }
}

/**
 * At a downgrade's or cancelation's end: when the account has more endpoints than `limit`, the ones to
 * keep serving are those in `keep` (in the user's order), then the oldest; the others are paused. Runs
 * in the caller's transaction; the caller emits endpoint.changed for the ids returned once it commits.
 */
export async function pauseBeyondLimit(tx: Executor, accountId: string, limit: number, keep: string[]) {
  const live = await store.liveEndpoints(tx, accountId);
  if (live.length <= limit) return [];
  const liveIds = new Set(live.map((e) => e.id));
  const kept = new Set(
    [...new Set([...keep.filter((id) => liveIds.has(id)), ...live.map((e) => e.id)])].slice(0, limit),
  );
  const paused = await store.pauseServing(
    tx,
    accountId,
    live.filter((e) => !kept.has(e.id)).map((e) => e.id),
  );
  return paused.map((p) => p.id);
}

/** The account's endpoints that are not archived, oldest first (what a downgrade chooses from). */
export const liveEndpoints = (db: Executor, accountId: string) => store.liveEndpoints(db, accountId);
/** The account's endpoints stopped at their plan's monthly limit. */
export const limitReachedEndpoints = (db: Executor, accountId: string) =>
  store.endpointsInStatus(db, accountId, "LIMIT_REACHED");

/** A change to an archived endpoint is refused: archiving is final. */
function assertNotArchived(row: store.EndpointRow) {
  if (row.status === "ARCHIVED") throw conflict("This endpoint is archived and can no longer be changed.");
}

export async function updateLabel(db: Db, events: DomainEvents, accountId: string, id: string, label: string) {
  const row = await getEndpointOrFail(db, accountId, id);
  assertNotArchived(row);
  const updated = await store.updateEndpoint(db, accountId, id, { label: label.trim() });
  await events.emitAndWait("endpoint.changed", { accountId, endpointId: id });
  return updated;
}

/** The one place endpoint status transitions are decided. */
export function nextStatus(current: EndpointStatus, action: "togglePause" | "archive"): EndpointStatus {
  if (action === "archive") {
    if (current === "ARCHIVED") throw conflict("This endpoint is archived already.");
    return "ARCHIVED";
  }
  if (current === "ACTIVE") return "PAUSED";
  if (current === "PAUSED") return "ACTIVE";
  throw conflict(`An endpoint that is ${current.toLowerCase().replace("_", " ")} cannot be paused or resumed.`);
}

async function transition(
  db: Db,
  events: DomainEvents,
  accountId: string,
  id: string,
  action: "togglePause" | "archive",
) {
  const updated = await db.transaction(async (tx) => {
    const row = foundOr(isUuid(id) ? await store.getEndpoint(tx, accountId, id, true) : undefined, "The endpoint");
    const status = nextStatus(row.status as EndpointStatus, action);
    if (status === "ACTIVE") {
      const subscription = foundOr(await lockedSubscription(tx, accountId), "The subscription");
      await assertEndpointRoom(tx, accountId, subscription, "resume");
    }
    return store.updateEndpoint(tx, accountId, id, {
      status,
      ...(status === "ARCHIVED" && { archivedAt: new Date() }),
    });
  });
  // After the commit: listeners read the endpoint back from the database.
  await events.emitAndWait("endpoint.changed", { accountId, endpointId: id });
  return updated;
}

export const togglePaused = (db: Db, events: DomainEvents, accountId: string, id: string) =>
  transition(db, events, accountId, id, "togglePause");
export const archive = (db: Db, events: DomainEvents, accountId: string, id: string) =>
  transition(db, events, accountId, id, "archive");

/**
 * The monthly limit: when the account's usage reaches its plan's responses per month, its ACTIVE endpoints
 * become LIMIT_REACHED; when the period rolls over or the limit rises, they are ACTIVE again. Paused or
 * archived endpoints keep their status. Returns the endpoints that changed.
 */
export async function setLimitReached(db: Db, events: DomainEvents, accountId: string, reached: boolean) {
  const moved = reached
    ? await store.moveStatus(db, accountId, "ACTIVE", "LIMIT_REACHED")
    : await store.moveStatus(db, accountId, "LIMIT_REACHED", "ACTIVE");
  await Promise.all(moved.map(({ id }) => events.emitAndWait("endpoint.changed", { accountId, endpointId: id })));
  return moved.map((m) => m.id);
}

export async function addTag(db: Db, events: DomainEvents, accountId: string, endpointId: string, label: string) {
  const row = await getEndpointOrFail(db, accountId, endpointId);
  assertNotArchived(row);
  await db.transaction(async (tx) => {
    const tag = await store.ensureTag(tx, accountId, label.trim());
    await store.linkTag(tx, endpointId, tag.id);
  });
  await events.emitAndWait("endpoint.changed", { accountId, endpointId });
  return row;
}

export async function removeTag(db: Db, events: DomainEvents, accountId: string, endpointId: string, tagId: string) {
  const row = await getEndpointOrFail(db, accountId, endpointId);
  foundOr(isUuid(tagId) ? await store.getTag(db, accountId, tagId) : undefined, "The tag");
  await store.unlinkTag(db, endpointId, tagId);
  await events.emitAndWait("endpoint.changed", { accountId, endpointId });
  return row;
}

export async function deleteTag(db: Db, events: DomainEvents, accountId: string, tagId: string) {
  if (!isUuid(tagId) || !(await store.deleteTag(db, accountId, tagId))) throw notFound("The tag");
  await events.emitAndWait("endpoints.listChanged", { accountId });
}

/** An answer read from nothing that can change (no tag id names a tag). */
const alwaysCurrent = () => true;

/**
 * A page of the account's endpoints: from the process's list cache when one is given and can answer,
 * else from SQL; both give the same page. `isCurrent` says whether the page still holds (null: it was
 * read from SQL, and only SQL can tell).
 */
export async function listEndpoints(
  db: Db,
  lists: EndpointListCache | null,
  accountId: string,
  args: {
    first?: number | null;
    after?: string | null;
    search?: string | null;
    tagIds?: string[] | null;
    status?: string | null;
    orderBy?: store.EndpointOrder | null;
  },
) {
  const first = pageSize(args.first);
  const order = args.orderBy ?? "CREATED_AT_DESC";
  // The list cache keeps its rows' cursors; a row read by SQL is a new object, encoded once.
  const cursorOf = (row: store.EndpointPage["rows"][number]) =>
    lists ? lists.cursorOf(row.endpoint, order) : encodeCursor(store.cursorOf(row.endpoint, order));
  const after = cursorArgument(args.after, store.cursorShape);
  const tagIds = (args.tagIds ?? []).filter(isUuid);
  if (args.tagIds && args.tagIds.length > 0 && tagIds.length === 0) {
    return {
      ...connectionWithCursors([], first, cursorOf),
      totalCount: 0,
      isCurrent: alwaysCurrent,
    };
  }
  const filter = { search: args.search, tagIds, status: args.status };
  const { rows, totalCount, isCurrent } = (await lists?.page(accountId, filter, order, first + 1, after)) ?? {
    ...(await store.listEndpoints(db, accountId, filter, order, first + 1, after)),
    isCurrent: null,
  };
  return {
    ...connectionWithCursors(rows, first, cursorOf),
    totalCount,
    isCurrent,
  };
}

export const listTags = (db: Db, accountId: string) => store.listTags(db, accountId);

export const tagsOfEndpoints = (db: Db, accountId: string, endpointIds: string[]) =>
  store.tagsOfEndpoints(db, accountId, endpointIds);

/** The account's endpoints among these ids (any status). */
export const endpointsByIds = (db: Db, accountId: string, ids: string[]) => store.getEndpoints(db, accountId, ids);
