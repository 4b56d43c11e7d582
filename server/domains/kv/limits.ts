import { AppError, badInput, type FieldError } from "../../platform/errors.ts";
import { hasUnpairedSurrogate } from "../../platform/text.ts";
import { planLimitsCatalogue } from "../catalogue/plan-limits.ts";

/**
 * Every limit and price of the key-value store, in one place: the plan's (from schemas/catalogue/kv-limits.json)
 * and the fixed ones every plan shares. Each check answers with the limit in words.
 */

export interface PlanKvLimits {
  /** Lists, sets and values of the account together. */
  keys: number;
  /** Multipart uploads begun and not yet completed, aborted or expired. */
  openUploads: number;
  /** Items in one list or set. */
  itemsPerKey: number;
  /** UTF-8 bytes of one value. */
  valueBytes: number;
  /** Write operations by filters and functions included in a billing period (see writeOperations). */
  writesPerPeriod: number;
  /** The price of a million write operations beyond the included ones; null: none beyond are allowed. */
  centsPerMillionWrites: number | null;
}

/** A key: 1–128 letters, digits and `_ - . :`. */
export const KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Characters of one item of a list or set (an address is 42). */
export const MAX_ITEM_CHARS = 256;
/** Items one add or remove call may carry (an upload carries more, in parts; a GraphQL argument holds at most 10,000 values). */
export const MAX_ITEMS_PER_CALL = 5_000;
/** Bytes of one uploaded part, and of a whole upload (every plan). */
export const MAX_PART_BYTES = 16 * 1024 * 1024;
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;
/**
 * Bytes of parts one account may have on their way to this service at once (each counted by its
 * Content-Length as it starts): a part's body is held in memory until it is whole, and forty PUTs of
 * 16 MiB sent side by side took the service from 159 to 783 MB. Four parts of the most, or sixty-four
 * of the console's 1 MiB; the console sends one at a time.
 */
export const MAX_RECEIVING_PART_BYTES = 64 * 1024 * 1024;
/** How long a part URL may be used, and an upload kept before it is swept. */
export const PART_URL_SECONDS = 15 * 60;
export const UPLOAD_HOURS = 24;

export const limitsOf = planLimitsCatalogue<PlanKvLimits>("kv-limits.json").ofAccount;

const tooMany = (message: string) => new AppError("CONFLICT", message);

const MIB = 1024 * 1024;

/**
 * The one rule of an upload's size, checked three times: the size a client declares at initiate (so a file
 * too large is refused before any part is sent), the parts as they arrive, and the file joined at complete.
 * `declared`: the bytes are the whole file's, as the client said, so the refusal can name them.
 */
export function checkUploadBytes(bytes: number, declared = false) {
  if (bytes <= MAX_UPLOAD_BYTES) return;
  const limit = `${MAX_UPLOAD_BYTES / MIB} MiB`;
  const size = (bytes / MIB).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const message = `${declared ? `This file is ${size} MiB; an` : "An"} upload is at most ${limit}. Split the file into files of ${limit} or less and upload each into the same key.`;
  throw declared ? badInput([{ pointer: "/size", message }], message) : new AppError("BAD_USER_INPUT", message);
}

/** A new key would take the account past its plan's keys. */
export function checkKeyCount(limits: PlanKvLimits, keysAfter: number) {
  if (keysAfter > limits.keys)
    throw tooMany(
      `Your plan allows ${limits.keys.toLocaleString("en-US")} keys (lists, address books and values together). Delete one or upgrade your plan.`,
    );
}

/** A new upload would take the account past its plan's open uploads. */
export function checkOpenUploads(limits: PlanKvLimits, openAfter: number) {
  if (openAfter > limits.openUploads)
    throw tooMany(
      `Your plan allows ${limits.openUploads.toLocaleString("en-US")} open uploads at once, and this account has them. Complete or abort one (the Key-value store overview lists them), or wait until one expires (${UPLOAD_HOURS} hours after it began).`,
    );
}

/** A list or set would hold more items than the plan allows. */
export function checkItemCount(limits: PlanKvLimits, key: string, itemsAfter: number) {
  if (itemsAfter > limits.itemsPerKey)
    throw tooMany(
      `"${key}" would hold ${itemsAfter.toLocaleString("en-US")} items; your plan allows ${limits.itemsPerKey.toLocaleString("en-US")} per list or address book. Remove some items first, or upgrade your plan.`,
    );
}

/**
 * Write operations one helper call is billed: each item or value it added or removed, and at least one,
 * since a call that changed nothing (an item already there) still wrote (as a bulk write is billed per key).
 */
export function writeOperations(changed: number): number {
  return Math.max(1, changed);
}

/** What a billing period's write operations cost under the plan: those past the included ones, priced per million. */
export function writeCharge(limits: PlanKvLimits, operations: number) {
  const overage = Math.max(0, operations - limits.writesPerPeriod);
  return {
    included: limits.writesPerPeriod,
    overage,
    /** US dollars, rounded to the cent as an invoice line is. */
    cost: limits.centsPerMillionWrites === null ? 0 : Math.round((overage * limits.centsPerMillionWrites) / 1e6) / 100,
    pricePerMillion: limits.centsPerMillionWrites === null ? null : limits.centsPerMillionWrites / 100,
  };
}

/** A plan without a price beyond its included writes refuses the write that goes past them. */
export function checkWriteAllowance(limits: PlanKvLimits, periodOperations: number) {
  if (limits.centsPerMillionWrites === null && periodOperations > limits.writesPerPeriod)
    throw tooMany(
      `Your plan includes ${limits.writesPerPeriod.toLocaleString("en-US")} key-value writes from filters and functions per billing period, and they are used. Upgrade your plan to write more; reads still work.`,
    );
}

const UNPAIRED = "an unpaired UTF-16 surrogate (half of a character)";

/**
 * A value within the plan's size, and text PostgreSQL can keep as it is (no NUL, no unpaired surrogate:
 * filters and functions can send either).
 */
export function checkValue(limits: PlanKvLimits, value: string, pointer: string) {
  if (value.includes("\u0000")) throw badInput([{ pointer, message: "A value cannot contain NUL characters." }]);
  if (hasUnpairedSurrogate(value)) throw badInput([{ pointer, message: `A value cannot contain ${UNPAIRED}.` }]);
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > limits.valueBytes)
    throw badInput([
      {
        pointer,
        message: `This value is ${bytes.toLocaleString("en-US")} bytes; your plan allows ${limits.valueBytes.toLocaleString("en-US")}.`,
      },
    ]);
}

export function checkKey(key: string, pointer: string) {
  if (!KEY_PATTERN.test(key))
    throw badInput([{ pointer, message: "A key is 1 to 128 letters, digits, underscores, dashes, dots or colons." }]);
}

/** Why an item is refused, or null: trimmed, 1..MAX_ITEM_CHARS, no control characters, commas or unpaired surrogates. */
export function itemProblem(item: string): string | null {
  if (item.length === 0) return "An item cannot be empty.";
  if (item.length > MAX_ITEM_CHARS) return `An item is at most ${MAX_ITEM_CHARS} characters.`;
  // Commas and line breaks separate items in an uploaded file, so no item may hold one.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f,]/.test(item)) return "An item cannot contain commas or control characters.";
  if (hasUnpairedSurrogate(item)) return `An item cannot contain ${UNPAIRED}.`;
  if (item.trim() !== item) return "An item cannot start or end with spaces.";
  return null;
}

/**
 * An address book's item as it is stored and compared: without regard to case, as addresses are (the
 * same address in checksum and lower case is one item, and qnLib's look-ups in filters agree).
 */
export function addressBookItem(item: string): string {
  return item.toLowerCase();
}

/** Checks the items of one call; each bad one is named by its pointer. */
export function checkItems(items: readonly string[], pointer: string) {
  if (items.length > MAX_ITEMS_PER_CALL)
    throw badInput([
      {
        pointer,
        message: `At most ${MAX_ITEMS_PER_CALL.toLocaleString("en-US")} items at a time; upload a file for more.`,
      },
    ]);
  const fields: FieldError[] = [];
  items.forEach((item, i) => {
    const problem = itemProblem(item);
    if (problem && fields.length < 20) fields.push({ pointer: `${pointer}/${i}`, message: problem });
  });
  if (fields.length) throw badInput(fields);
}

/**
 * Items from text: one per line or separated by commas, each trimmed (so a CRLF line end is one), empty
 * ones skipped. The first bad item is refused naming its line (BAD_USER_INPUT on `pointer`). Pieces are
 * read one at a time, found with indexOf, so a file of millions of lines or commas is never split into
 * millions of strings at once. Every piece is a step, null for an empty one: a caller reading in turns
 * counts the 64 Mi empty pieces of a file of line breaks as it counts items.
 */
function* itemsOfText(text: string, pointer: string): Generator<string | null> {
  let line = 1;
  let comma = text.indexOf(",");
  let lineEnd = text.indexOf("\n");
  for (let start = 0; start <= text.length; ) {
    if (comma !== -1 && comma < start) comma = text.indexOf(",", start);
    if (lineEnd !== -1 && lineEnd < start) lineEnd = text.indexOf("\n", start);
    const end = Math.min(comma === -1 ? text.length : comma, lineEnd === -1 ? text.length : lineEnd);
    const item = text.slice(start, end).trim();
    if (item === "") yield null;
    else {
      const problem = itemProblem(item);
      if (problem) {
        const message = `Line ${line.toLocaleString("en-US")}: ${problem}`;
        throw badInput([{ pointer, message }], message);
      }
      yield item;
    }
    if (end === lineEnd) line++;
    start = end + 1;
  }
}

export function parseItemsText(text: string, pointer: string): string[] {
  const items: string[] = [];
  for (const item of itemsOfText(text, pointer)) if (item !== null) items.push(item);
  return items;
}

/** Pieces of text (items or empty ones) read between two turns of the event loop while an uploaded file is parsed. */
const PIECES_PER_TURN = 50_000;

/**
 * The items of an uploaded file (see itemsOfText), distinct ones for an address book, read in turns so the service
 * keeps answering meanwhile, and refused as soon as there are more than one list or set may hold: a
 * 64 MiB file of one-character lines costs its first `itemsPerKey` items, not 33 million strings.
 */
export async function parseUploadedItems(
  text: string,
  pointer: string,
  limits: PlanKvLimits,
  addressBook: boolean,
): Promise<string[]> {
  const book = new Set<string>();
  const list: string[] = [];
  let read = 0;
  for (const item of itemsOfText(text, pointer)) {
    if (++read % PIECES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    if (item === null) continue;
    const count = addressBook ? book.add(addressBookItem(item)).size : list.push(item);
    if (count > limits.itemsPerKey)
      throw tooMany(
        `The file holds more than ${limits.itemsPerKey.toLocaleString("en-US")} ${addressBook ? "distinct " : ""}items; your plan allows ${limits.itemsPerKey.toLocaleString("en-US")} per list or address book. Upload a smaller file, or upgrade your plan.`,
      );
  }
  return addressBook ? [...book] : list;
}
