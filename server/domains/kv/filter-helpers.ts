import type { FilterHelpers } from "../../dataplane/sandbox/types.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { checkItems, checkKey } from "./limits.ts";
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
export class KvFilterHelpers implements FilterHelpers {
  constructor(
    private readonly db: Db,
    private readonly accountId: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A write and its meter reading, in one transaction. */
  private write(run: (tx: Executor) => Promise<number>): Promise<number> {
    return this.db.transaction(async (tx) => {
      const changed = await run(tx);
      await meterHelperWrite(tx, this.accountId, changed, this.now());
      return changed;
    });
  }

  private async items(key: string): Promise<string[]> {
    return (await store.collectionSnapshot(this.db, this.accountId, key, null))?.items ?? [];
  }

  /**
   * The items of the list or address book `key` names with its version, which changes on every write
   * of the key: items are null when `knownVersion` is still current. A missing key is version 0, empty.
   */
  async itemsSnapshot(key: string, knownVersion: number | null): Promise<{ version: number; items: string[] | null }> {
    const snapshot = await store.collectionSnapshot(this.db, this.accountId, key, knownVersion);
    if (snapshot) return snapshot;
    return { version: 0, items: knownVersion === 0 ? null : [] };
  }

  qnGetList(key: string) {
    return this.items(key);
  }

  qnContainsListItems(key: string, items: string[]) {
    return store.containsItems(this.db, this.accountId, key, items);
  }

  async qnGetAllLists() {
    return (await store.listCollectionKeys(this.db, this.accountId)).map((row) => row.key);
  }

  async qnAddListItem(key: string, item: string) {
    await this.upsert(key, [item], []);
    return true;
  }

  async qnRemoveListItem(key: string, item: string) {
    return (await this.remove(key, [item])) > 0;
  }

  async qnUpsertList(key: string, options: { add_items?: string[]; remove_items?: string[] }) {
    await this.upsert(key, options.add_items ?? [], options.remove_items ?? []);
    return true;
  }

  async qnDeleteList(key: string) {
    const deleted = await this.write(async (tx) =>
      (await store.deleteCollection(tx, this.accountId, null, key)) ? 1 : 0,
    );
    return deleted > 0;
  }

  async qnGetSet(key: string) {
    return (await store.getValue(this.db, this.accountId, key))?.value ?? null;
  }

  async qnAddSet(key: string, value: string) {
    await this.write((tx) => writeValues(tx, this.accountId, [{ key, value }], "add", (_, f) => `/${f}`));
    return true;
  }

  async qnBulkSets(options: { add_sets?: Record<string, string>; delete_sets?: string[] }) {
    const entries = Object.entries(options.add_sets ?? {}).map(([key, value]) => ({ key, value }));
    await this.write(async (tx) => {
      const added = await writeValues(tx, this.accountId, entries, "add", (i, f) => `/add_sets/${i}/${f}`);
      const { removedCount } = await removeValues(tx, this.accountId, options.delete_sets ?? []);
      return added + removedCount;
    });
    return true;
  }

  async qnDeleteSet(key: string) {
    return (await this.write(async (tx) => (await removeValues(tx, this.accountId, [key])).removedCount)) > 0;
  }

  async qnGetAllSets() {
    return (await store.listValueKeys(this.db, this.accountId)).map((row) => row.key);
  }

  qnGetAddressBook(key: string) {
    return this.items(key);
  }

  qnContainsAddressBookItems(key: string, addresses: string[]) {
    return store.containsItems(this.db, this.accountId, key, addresses);
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
    checkItems(items, "/items");
    return this.write(async (tx) => {
      const row = await store.getCollection(tx, this.accountId, key, true);
      return row ? store.removeItems(tx, row, items) : 0;
    });
  }
}

/** The FilterHelpers port of the stream engine: the key-value store of the stream's account. */
export function kvFilterHelpers(db: Db): (accountId: string) => KvFilterHelpers {
  return (accountId) => new KvFilterHelpers(db, accountId);
}
