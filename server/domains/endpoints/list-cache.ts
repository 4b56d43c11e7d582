// The endpoints list, read on every visit to the endpoints screen and the dashboard: kept in the process
// per account, so a page costs no database round trip. An account's endpoints with their tags are loaded
// in one query on first use and filtered, sorted and paged here, with the same rows, total and cursors as
// the SQL path (store.listEndpoints). PostgreSQL decides what depends on its collation: the label order is
// the load query's, and a search is matched against the fields as PostgreSQL lowered them. What cannot be
// decided here exactly (a search with characters beyond printable ASCII, a cursor not naming a listed row
// with its current key) is left to the SQL path.
//
// Every change to an account's endpoints or tags emits "endpoint.changed" or "endpoints.listChanged",
// which the events relay carries to every other process; each drops that account's list at once.
import { LRUCache } from "lru-cache";
import type { Db } from "../../platform/db/index.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { encodeCursor } from "../../platform/paging.ts";
import * as store from "./store.ts";

interface ListedEndpoint extends store.ListedEndpointRow {
  tagIds: ReadonlySet<string>;
  createdAtMs: number;
}

interface AccountList {
  /** Every endpoint of the account, in LABEL_ASC order (PostgreSQL's). */
  byLabel: ListedEndpoint[];
  /** Every endpoint of the account, in CREATED_AT_ASC order. */
  byCreatedAt: ListedEndpoint[];
  /** Where each endpoint is in `byLabel`, by id. */
  labelPosition: Map<string, number>;
}

/** An account with more endpoints than this is listed by SQL: loading it whole would cost more than a page. */
const MAX_ENDPOINTS_PER_ACCOUNT = 5_000;
/** Accounts kept; with the total below, a few tens of megabytes at most. */
const MAX_ACCOUNTS = 1_000;
const MAX_ENDPOINTS = 50_000;
/**
 * How long a list is trusted without an event: a bound for changes made to the database without the
 * service (an administrator's SQL), which emit nothing.
 */
const TRUST_MS = 60_000;

/** Marks an account too large to keep: its lists go to SQL until the mark expires or is dropped. */
const TOO_LARGE = "too large" as const;
type Entry = AccountList | typeof TOO_LARGE;

/**
 * Search text this cache matches exactly as ILIKE does (which compares the lowered text and pattern):
 * PostgreSQL lowers ASCII letters as JavaScript does in every locale but a Turkic one.
 */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

const byId = (a: ListedEndpoint, b: ListedEndpoint) =>
  a.endpoint.id < b.endpoint.id ? -1 : a.endpoint.id > b.endpoint.id ? 1 : 0;
const byCreatedAt = (a: ListedEndpoint, b: ListedEndpoint) => a.createdAtMs - b.createdAtMs || byId(a, b);

function accountList(rows: store.ListedEndpointRow[]): AccountList {
  const byLabel = rows.map((row) => ({
    ...row,
    tagIds: new Set(row.tags.map((tag) => tag.tagId)),
    createdAtMs: row.endpoint.createdAt.getTime(),
  }));
  return {
    byLabel,
    byCreatedAt: [...byLabel].sort(byCreatedAt),
    labelPosition: new Map(byLabel.map((row, i) => [row.endpoint.id, i])),
  };
}

/** The filter as a test of one endpoint, or null when this cache cannot match it as PostgreSQL does. */
function matcher(filter: store.EndpointFilter): ((row: ListedEndpoint) => boolean) | null {
  const search = filter.search?.trim();
  if (search && !PRINTABLE_ASCII.test(search)) return null;
  const needle = search?.toLowerCase();
  const tagIds = filter.tagIds && filter.tagIds.length > 0 ? filter.tagIds.map((id) => id.toLowerCase()) : null;
  const status = filter.status;
  return (row) =>
    (status ? row.endpoint.status === status : row.endpoint.status !== "ARCHIVED") &&
    (!needle ||
      row.lowerLabel?.includes(needle) === true ||
      row.lowerName.includes(needle) ||
      row.lowerNetwork.includes(needle) ||
      row.lowerExId.includes(needle)) &&
    (!tagIds || tagIds.some((id) => row.tagIds.has(id)));
}

/**
 * The endpoints in the order's sequence that follow the cursor, or null when the cursor cannot be
 * placed here exactly as PostgreSQL compares it.
 */
function sequenceAfter(
  list: AccountList,
  order: store.EndpointOrder,
  after: store.Cursor | null,
): ListedEndpoint[] | null {
  const descending = order.endsWith("DESC");
  const all = order.startsWith("LABEL") ? list.byLabel : list.byCreatedAt;
  let start = 0;
  let end = all.length;
  if (after) {
    const [afterKey, afterIdText] = after;
    const afterId = afterIdText.toLowerCase();
    if (order.startsWith("LABEL")) {
      // The label order is PostgreSQL's: a cursor is placed by the listed row it names, if its key is that row's.
      const position = list.labelPosition.get(afterId);
      if (position === undefined || list.byLabel[position].labelKey !== afterKey) return null;
      if (descending) end = position;
      else start = position + 1;
    } else {
      const afterMs = Date.parse(afterKey);
      // A key that is not a timestamp as cursors write it is left to PostgreSQL's reading (or refusal) of it.
      if (Number.isNaN(afterMs) || new Date(afterMs).toISOString() !== afterKey) return null;
      const follows = (row: ListedEndpoint) =>
        row.createdAtMs > afterMs || (row.createdAtMs === afterMs && row.endpoint.id > afterId);
      const precedes = (row: ListedEndpoint) =>
        row.createdAtMs < afterMs || (row.createdAtMs === afterMs && row.endpoint.id < afterId);
      if (descending) end = all.findLastIndex(precedes) + 1;
      else {
        const first = all.findIndex(follows);
        start = first === -1 ? all.length : first;
      }
    }
  }
  const slice = all.slice(start, end);
  return descending ? slice.reverse() : slice;
}

export class EndpointListCache {
  private readonly cache = new LRUCache<string, Entry>({
    max: MAX_ACCOUNTS,
    maxSize: MAX_ENDPOINTS,
    sizeCalculation: (entry) => (entry === TOO_LARGE ? 1 : Math.max(entry.byLabel.length, 1)),
    ttl: TRUST_MS,
  });
  /** Loads under way, shared by the requests that arrive meanwhile. */
  private readonly loading = new Map<string, Promise<Entry>>();
  /**
   * Counts drops: a load that started before a drop does not cache what it read, which may be from
   * before the change.
   */
  private generation = 0;
  /**
   * Encoded cursors by endpoint row, one map per sort key. This cache hands out the same row objects on
   * every request, so a listed endpoint's cursor is encoded once, not per page.
   */
  private readonly cursors = {
    label: new WeakMap<store.EndpointRow, string>(),
    createdAt: new WeakMap<store.EndpointRow, string>(),
  };

  constructor(
    private readonly db: Db,
    events: DomainEvents,
  ) {
    events.on("endpoint.changed", ({ accountId }) => this.drop(accountId));
    events.on("endpoints.listChanged", ({ accountId }) => this.drop(accountId));
    // Events from other processes may have been missed while the relay reconnected.
    events.on("relay.resynced", () => this.dropAll());
  }

  /**
   * What store.listEndpoints answers for these arguments, from the process's copy of the account's
   * endpoints, with a check of whether that copy is still the current one; null when the SQL path must
   * answer.
   */
  async page(
    accountId: string,
    filter: store.EndpointFilter,
    order: store.EndpointOrder,
    limit: number,
    after: store.Cursor | null,
  ): Promise<(store.EndpointPage & { isCurrent: () => boolean }) | null> {
    const matches = matcher(filter);
    if (!matches) return null;
    const list = await this.entry(accountId);
    if (list === TOO_LARGE) return null;
    const sequence = sequenceAfter(list, order, after);
    if (!sequence) return null;
    const rows: store.EndpointPage["rows"] = [];
    for (const row of sequence) {
      if (rows.length === limit) break;
      if (matches(row)) rows.push({ endpoint: row.endpoint, tags: row.tags });
    }
    let totalCount = 0;
    for (const row of list.byLabel) if (matches(row)) totalCount++;
    return { rows, totalCount, isCurrent: () => this.cache.get(accountId) === list };
  }

  /** The page cursor of a row in `order`: kept for the rows this cache handed out, encoded afresh for others. */
  cursorOf(row: store.EndpointRow, order: store.EndpointOrder): string {
    const encoded = order.startsWith("LABEL") ? this.cursors.label : this.cursors.createdAt;
    let cursor = encoded.get(row);
    if (cursor === undefined) {
      cursor = encodeCursor(store.cursorOf(row, order));
      encoded.set(row, cursor);
    }
    return cursor;
  }

  private entry(accountId: string): Promise<Entry> {
    const cached = this.cache.get(accountId);
    if (cached) return Promise.resolve(cached);
    const pending = this.loading.get(accountId);
    if (pending) return pending;
    const generation = this.generation;
    const load = store
      .endpointsOfAccount(this.db, accountId, MAX_ENDPOINTS_PER_ACCOUNT + 1)
      .then((rows): Entry => {
        const entry = rows.length > MAX_ENDPOINTS_PER_ACCOUNT ? TOO_LARGE : accountList(rows);
        if (generation === this.generation) this.cache.set(accountId, entry);
        return entry;
      })
      .finally(() => {
        if (this.loading.get(accountId) === load) this.loading.delete(accountId);
      });
    this.loading.set(accountId, load);
    return load;
  }

  private drop(accountId: string) {
    this.generation++;
    this.cache.delete(accountId);
    this.loading.delete(accountId);
  }

  private dropAll() {
    this.generation++;
    this.cache.clear();
    this.loading.clear();
  }
}
