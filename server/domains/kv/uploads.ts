import type { Db } from "../../platform/db/index.ts";
import { AppError, foundOr } from "../../platform/errors.ts";
import { checkKey, checkKeyCount, limitsOf, PART_URL_SECONDS, parseItemsText, UPLOAD_HOURS } from "./limits.ts";
import type { PartStorage } from "./part-storage.ts";
import { addItemsCreating, type CollectionKind } from "./service.ts";
import * as store from "./store.ts";

/**
 * Multipart uploads of items into a list or address book (the spec's initiate → part URL per part →
 * complete or abort). Parts go to the PartStorage; complete joins them, parses the text and adds the
 * items in one transaction, then deletes the parts.
 */

const THE_UPLOAD = "The upload";

/** Ends the account's uploads left past their time (their parts with them). */
async function sweep(db: Db, storage: PartStorage, accountId: string, now: Date) {
  for (const upload of await store.expiredUploads(db, accountId, now)) {
    if (await store.deleteUpload(db, accountId, upload.id)) await storage.discard(upload).catch(() => undefined);
  }
}

export async function initiateUpload(
  db: Db,
  storage: PartStorage,
  accountId: string,
  kind: CollectionKind,
  key: string,
  now = new Date(),
) {
  checkKey(key, "/key");
  await sweep(db, storage, accountId, now);
  // The key must hold the kind uploaded into, when it exists.
  const existing = await store.getCollection(db, accountId, key);
  if (existing && existing.kind !== kind)
    throw new AppError(
      "CONFLICT",
      `The key "${key}" names ${existing.kind === "LIST" ? "a list" : "an address book"}; upload into that, or choose another key.`,
    );
  // A new key the plan has no room for is refused now, not after the whole file was sent (complete checks again).
  if (!existing) checkKeyCount(await limitsOf(db, accountId), (await store.countKeys(db, accountId)) + 1);
  const id = crypto.randomUUID();
  const where = await storage.begin(accountId, id);
  const row = await store.insertUpload(db, accountId, {
    id,
    kind,
    key,
    bucket: storage.bucket,
    objectPrefix: where.objectPrefix,
    expiresAt: new Date(now.getTime() + UPLOAD_HOURS * 3600_000),
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

export async function completeUpload(db: Db, storage: PartStorage, accountId: string, uploadId: string) {
  const upload = foundOr(await store.getUpload(db, accountId, uploadId), THE_UPLOAD);
  const bytes = await storage.read(upload);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AppError("BAD_USER_INPUT", "The file is not UTF-8 text.");
  }
  const items = parseItemsText(text.replace(/^\uFEFF/, "").replace(/\r/g, ""), "/uploadId");
  const kind = upload.kind as CollectionKind;
  const addedCount = await db.transaction(async (tx) => {
    // Deleted first, so a second complete of the same upload finds nothing to add.
    foundOr(await store.deleteUpload(tx, accountId, uploadId), THE_UPLOAD);
    return addItemsCreating(tx, accountId, kind, upload.key, kind === "SET" ? [...new Set(items)] : items);
  });
  await storage.discard(upload).catch(() => undefined);
  return { success: true, key: upload.key, addedCount };
}

export async function abortUpload(db: Db, storage: PartStorage, accountId: string, uploadId: string) {
  const upload = foundOr(await store.deleteUpload(db, accountId, uploadId), THE_UPLOAD);
  await storage.discard(upload);
  return { success: true, message: "The upload was aborted and its parts deleted.", error: null };
}
