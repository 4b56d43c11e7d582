import type { FilterHelperName, FilterHelpers } from "../../dataplane/sandbox/types.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import { checkItems, checkKey, itemProblem, KEY_PATTERN } from "./limits.ts";
import { meterHelperWrite } from "./metering.ts";
import { addItemsCreating, removeValues, writeValues } from "./service.ts";
import * as store from "./store.ts";

/**
 * The key-value store as filters and functions see it (`qnLib.*`), for one account. Names follow the
 * filter API: `List` helpers read and write lists, `AddressBook` helpers address books (the sets of
 * the console), and `Set` helpers values (QuickNode's "sets" are single key → value pairs). Reads look
 * at whatever a key names; a write to a missing key makes a list. Limits are the plan's, as in the console.
 *
 * Metering: reads are free; each call that writes is billed its write operations (metering.ts), in the
 * write's own transaction, so a write refused past the plan's included writes leaves nothing written.
 */
/** A key some write could have made: a read of any other key finds nothing without asking the database. */
const possibleKey = (key: string) => KEY_PATTERN.test(key);

/**
 * What a helper call that failed says to the code that called it. A refusal says why in its own words
 * (the field messages, not "The input is not valid."); anything else (the database) says only that the
 * store failed: its text would show the code our SQL, its parameters and the account's id.
 */
function helperError(name: FilterHelperName, error: unknown): Error {
  if (error instanceof AppError) {
    const why = error.fields.length > 0 ? error.fields.map((f) => f.message).join(" ") : error.message;
    return new Error(`qnLib.${name}: ${why}`);
  }
  return new Error(`qnLib.${name}: the key-value store could not answer; try again.`);
}

/**
 * Reads of a whole list or address book of one account, one at a time in a process (kvFilterHelpers makes
 * one per process). A list may hold the plan's items per key (a million on Build: 256 MB of text, read,
 * kept and written out as JSON by the service): one function reading a list of 100,000 twenty times side
 * by side took the service from 373 to 1,753 MB, so a list of a million would have ended it.
 */
class WholeReads {
  /** Per account, the last read queued: the next one starts when it settles. */
  private readonly last = new Map<string, Promise<void>>();

  oneAtATime<T>(accountId: string, read: () => Promise<T>): Promise<T> {
    const done = (this.last.get(accountId) ?? Promise.resolve()).then(read);
    const settled = done.then(
      () => undefined,
      () => undefined,
    );
    this.last.set(accountId, settled);
    void settled.then(() => {
      if (this.last.get(accountId) === settled) this.last.delete(accountId);
    });
    return done;
  }
}

export class KvFilterHelpers implements FilterHelpers {
  constructor(
    private readonly db: Db,
    private readonly accountId: string,
    private readonly wholeReads: WholeReads,
    private readonly now: () => Date,
  ) {}

  /** Every helper's answer, its failures in words the calling code may read (see helperError). */
  private async answer<T>(name: FilterHelperName, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw helperError(name, error);
    }
  }

  /** A write and its meter reading, in one transaction. */
  private write(run: (tx: Executor) => Promise<number>): Promise<number> {
    return this.db.transaction(async (tx) => {
      const changed = await run(tx);
      await meterHelperWrite(tx, this.accountId, changed, this.now());
      return changed;
    });
  }

  private async items(key: string): Promise<string[]> {
    if (!possibleKey(key)) return [];
    const snapshot = await this.wholeReads.oneAtATime(this.accountId, () =>
      store.collectionSnapshot(this.db, this.accountId, key, null),
    );
    return snapshot?.items ?? [];
  }

  /**
   * The items of the list or address book `key` names with its version, which changes on every write
   * of the key: items are null when `knownVersion` is still current. A missing key is version 0, empty.
   */
  async itemsSnapshot(key: string, knownVersion: number | null): Promise<{ version: number; items: string[] | null }> {
    const missing = { version: 0, items: knownVersion === 0 ? null : [] };
    if (!possibleKey(key)) return missing;
    const snapshot = await this.wholeReads.oneAtATime(this.accountId, () =>
      store.collectionSnapshot(this.db, this.accountId, key, knownVersion),
    );
    return snapshot ?? missing;
  }

  qnGetList(key: string) {
    return this.answer("qnGetList", () => this.items(key));
  }

  qnContainsListItems(key: string, items: string[]) {
    return this.answer("qnContainsListItems", () => this.contains(key, items));
  }

  qnGetAllLists() {
    return this.answer("qnGetAllLists", async () =>
      (await store.listCollectionKeys(this.db, this.accountId)).map((row) => row.key),
    );
  }

  qnAddListItem(key: string, item: string) {
    return this.answer("qnAddListItem", async () => {
      await this.upsert(key, [item], []);
      return true;
    });
  }

  qnRemoveListItem(key: string, item: string) {
    return this.answer("qnRemoveListItem", async () => (await this.remove(key, [item])) > 0);
  }

  qnUpsertList(key: string, options: { add_items?: string[]; remove_items?: string[] }) {
    return this.answer("qnUpsertList", async () => {
      await this.upsert(key, options.add_items ?? [], options.remove_items ?? []);
      return true;
    });
  }

  qnDeleteList(key: string) {
    return this.answer("qnDeleteList", async () => {
      checkKey(key, "/key");
      const deleted = await this.write(async (tx) =>
        (await store.deleteCollection(tx, this.accountId, null, key)) ? 1 : 0,
      );
      return deleted > 0;
    });
  }

  qnGetSet(key: string) {
    return this.answer("qnGetSet", async () =>
      possibleKey(key) ? ((await store.getValue(this.db, this.accountId, key))?.value ?? null) : null,
    );
  }

  qnAddSet(key: string, value: string) {
    return this.answer("qnAddSet", async () => {
      await this.write((tx) => writeValues(tx, this.accountId, [{ key, value }], "add", (_, f) => `/${f}`));
      return true;
    });
  }

  qnBulkSets(options: { add_sets?: Record<string, string>; delete_sets?: string[] }) {
    return this.answer("qnBulkSets", async () => {
      const entries = Object.entries(options.add_sets ?? {}).map(([key, value]) => ({ key, value }));
      await this.write(async (tx) => {
        const added = await writeValues(tx, this.accountId, entries, "add", (i, f) => `/add_sets/${i}/${f}`);
        const { removedCount } = await removeValues(tx, this.accountId, options.delete_sets ?? []);
        return added + removedCount;
      });
      return true;
    });
  }

  qnDeleteSet(key: string) {
    return this.answer("qnDeleteSet", async () => {
      checkKey(key, "/key");
      return (await this.write(async (tx) => (await removeValues(tx, this.accountId, [key])).removedCount)) > 0;
    });
  }

  qnGetAllSets() {
    return this.answer("qnGetAllSets", async () =>
      (await store.listValueKeys(this.db, this.accountId)).map((row) => row.key),
    );
  }

  qnGetAddressBook(key: string) {
    return this.answer("qnGetAddressBook", () => this.items(key));
  }

  qnContainsAddressBookItems(key: string, addresses: string[]) {
    return this.answer("qnContainsAddressBookItems", () => this.contains(key, addresses));
  }

  /** An item no write could add (see itemProblem) is held nowhere: it is answered false without a look-up. */
  private async contains(key: string, items: string[]): Promise<boolean[]> {
    if (!possibleKey(key)) return items.map(() => false);
    const possible = items.filter((item) => itemProblem(item) === null);
    const held = await store.containsItems(this.db, this.accountId, key, possible);
    const answers = new Map(possible.map((item, i) => [item, held[i]]));
    return items.map((item) => answers.get(item) ?? false);
  }

  private upsert(key: string, add: string[], remove: string[]) {
    checkKey(key, "/key");
    checkItems(add, "/add_items");
    checkItems(remove, "/remove_items");
    return this.write(async (tx) => {
      const added = await addItemsCreating(tx, this.accountId, "LIST", key, add, true);
      const row = remove.length ? await store.getCollection(tx, this.accountId, key, true) : undefined;
      return added + (row ? await store.removeItems(tx, row, remove) : 0);
    });
  }

  private remove(key: string, items: string[]) {
    checkKey(key, "/key");
    checkItems(items, "/items");
    return this.write(async (tx) => {
      const row = await store.getCollection(tx, this.accountId, key, true);
      return row ? store.removeItems(tx, row, items) : 0;
    });
  }
}

/**
 * The FilterHelpers port of the stream engine: the key-value store of the stream's account. One per process
 * (app.ts, engine.ts make it for their engine and functions alike), so its whole reads go one at a time.
 */
export function kvFilterHelpers(db: Db, now: () => Date = () => new Date()): (accountId: string) => KvFilterHelpers {
  const wholeReads = new WholeReads();
  return (accountId) => new KvFilterHelpers(db, accountId, wholeReads, now);
}
