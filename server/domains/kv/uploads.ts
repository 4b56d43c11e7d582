import type { Db } from "../../platform/db/index.ts";
import { AppError, conflict, foundOr } from "../../platform/errors.ts";
import { connection, cursorArgument, pageSize } from "../../platform/paging.ts";
import {
  checkKey,
  checkKeyCount,
  checkOpenUploads,
  checkUploadBytes,
  limitsOf,
  PART_URL_SECONDS,
  parseUploadedItems,
  UPLOAD_HOURS,
} from "./limits.ts";
import type { PartStorage } from "./part-storage.ts";
import { addItemsCreating, type CollectionKind } from "./service.ts";
import * as store from "./store.ts";

/**
 * Multipart uploads of items into a list or address book (the spec's initiate → part URL per part →
 * complete or abort). Parts go to the PartStorage; complete joins them, parses the text and adds the
 * items in one transaction, then deletes the parts.
 */

const THE_UPLOAD = "The upload";

/** Ends an upload left past its time, its parts with it (whoever deletes its row discards them). */
async function expire(db: Db, storage: PartStorage, upload: store.UploadRow) {
  if (await store.deleteUpload(db, upload.accountId, upload.id)) await storage.discard(upload).catch(() => undefined);
}

/** Ends the account's uploads left past their time (their parts with them). */
async function sweep(db: Db, storage: PartStorage, accountId: string, now: Date) {
  for (const upload of await store.expiredUploads(db, accountId, now)) await expire(db, storage, upload);
}

/** Expired uploads one housekeeping pass ends at most (the next pass takes the rest). */
const SWEEP_BATCH = 100;

/**
 * Ends every account's expired uploads (the service's housekeeping, so uploads left behind go although
 * their account never initiates another). Returns how many it ended.
 */
export async function sweepExpiredUploads(db: Db, storage: PartStorage, now = new Date()): Promise<number> {
  const expired = await store.expiredUploadsOfAllAccounts(db, now, SWEEP_BATCH);
  for (const upload of expired) await expire(db, storage, upload);
  return expired.length;
}

/** The account's open uploads, newest first, with the parts and bytes received of each. */
export async function openUploadsPage(
  db: Db,
  storage: PartStorage,
  accountId: string,
  args: { first?: number | null; after?: string | null },
  now = new Date(),
) {
  const after = cursorArgument(args.after, store.uploadCursorShape);
  const size = pageSize(args.first);
  const page = await store.listOpenUploads(db, accountId, now, { limit: size + 1, after });
  const rows = await Promise.all(
    page.rows.map(async (upload) => ({ ...upload, received: await storage.received(upload) })),
  );
  return { ...connection(rows, size, store.uploadCursorOf), totalCount: page.totalCount };
}

export async function initiateUpload(
  db: Db,
  storage: PartStorage,
  accountId: string,
  kind: CollectionKind,
  key: string,
  /** The file's bytes, when the client declares them: a file too large is refused before any part is sent. */
  size: number | null = null,
  now = new Date(),
) {
  checkKey(key, "/key");
  if (size !== null) checkUploadBytes(size, true);
  await sweep(db, storage, accountId, now);
  // The key must hold the kind uploaded into, when it exists.
  const existing = await store.getCollection(db, accountId, key);
  if (existing && existing.kind !== kind)
    throw new AppError(
      "CONFLICT",
      `The key "${key}" names ${existing.kind === "LIST" ? "a list" : "an address book"}; upload into that, or choose another key.`,
    );
  const limits = await limitsOf(db, accountId);
  // A new key the plan has no room for is refused now, not after the whole file was sent (complete checks again).
  if (!existing) checkKeyCount(limits, (await store.countKeys(db, accountId)) + 1);
  const row = await db.transaction(async (tx) => {
    await store.lockAccountUploads(tx, accountId);
    checkOpenUploads(limits, (await store.countOpenUploads(tx, accountId, now)) + 1);
    const id = crypto.randomUUID();
    const where = await storage.begin(accountId, id);
    return store.insertUpload(tx, accountId, {
      id,
      kind,
      key,
      bucket: storage.bucket,
      objectPrefix: where.objectPrefix,
      expiresAt: new Date(now.getTime() + UPLOAD_HOURS * 3600_000),
    });
  });
  return { uploadId: row.id, key: row.key, bucket: row.bucket };
}

export async function partUrl(
  db: Db,
  storage: PartStorage,
  accountId: string,
  uploadId: string,
  partNumber: number,
  baseUrl: string,
  now = new Date(),
) {
  const upload = foundOr(await store.getUpload(db, accountId, uploadId), THE_UPLOAD);
  const expiresAt = new Date(Math.min(now.getTime() + PART_URL_SECONDS * 1000, upload.expiresAt.getTime()));
  return { url: await storage.partUrl(upload, partNumber, expiresAt, baseUrl), partNumber, expiresAt };
}

/**
 * The uploads a service is completing (one per service: the kv plugin makes it). A complete reads the whole
 * file (64 MiB, and its text) before its transaction finds whether another complete took the upload first:
 * ten side by side of one upload held ten copies, 1.8 GB. Another complete of one being completed is
 * refused at once.
 */
export class CompletingUploads {
  private readonly ids = new Set<string>();

  /** Runs `complete` for the upload, or refuses with CONFLICT while another complete of it runs. */
  async hold<T>(uploadId: string, complete: () => Promise<T>): Promise<T> {
    if (this.ids.has(uploadId)) throw conflict("This upload is being completed already.");
    this.ids.add(uploadId);
    try {
      return await complete();
    } finally {
      this.ids.delete(uploadId);
    }
  }
}

export async function completeUpload(
  db: Db,
  storage: PartStorage,
  completing: CompletingUploads,
  accountId: string,
  uploadId: string,
) {
  const upload = foundOr(await store.getUpload(db, accountId, uploadId), THE_UPLOAD);
  return completing.hold(upload.id, () => completeTaken(db, storage, accountId, upload));
}

async function completeTaken(db: Db, storage: PartStorage, accountId: string, upload: store.UploadRow) {
  const uploadId = upload.id;
  const bytes = await storage.read(upload);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AppError("BAD_USER_INPUT", "The file is not UTF-8 text.");
  }
  const kind = upload.kind as CollectionKind;
  const items = await parseUploadedItems(
    // A CR before a line's LF is trimmed with the item (replacing every CR here copied the file part by
    // part: 1.2 GB and 10 s on the service's thread for 64 MiB of CRLF lines).
    text.replace(/^\uFEFF/, ""),
    "/uploadId",
    await limitsOf(db, accountId),
    kind === "SET",
  );
  const addedCount = await db.transaction(async (tx) => {
    // Deleted first, so a second complete of the same upload finds nothing to add.
    foundOr(await store.deleteUpload(tx, accountId, uploadId), THE_UPLOAD);
    return addItemsCreating(tx, accountId, kind, upload.key, items);
  });
  await storage.discard(upload).catch(() => undefined);
  return { success: true, key: upload.key, addedCount };
}

export async function abortUpload(db: Db, storage: PartStorage, accountId: string, uploadId: string) {
  const upload = foundOr(await store.deleteUpload(db, accountId, uploadId), THE_UPLOAD);
  await storage.discard(upload);
  return { success: true, message: "The upload was aborted and its parts deleted.", error: null };
}
