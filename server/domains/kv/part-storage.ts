import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { type AppConfig, type KvUploadS3, persistentSecret } from "../../platform/config.ts";
import { AppError } from "../../platform/errors.ts";
import { checkUploadBytes } from "./limits.ts";
import type { UploadRow } from "./store.ts";

/**
 * Where the parts of multipart uploads are kept until they are completed or aborted: files under the
 * data directory, PUT to this service's signed part URLs; or objects in an S3 bucket, PUT straight to
 * S3 with presigned URLs.
 */
export interface PartStorage {
  /** "local", or the S3 bucket's name (the spec's `bucket` of an upload). */
  readonly bucket: string;
  /** Prepares an upload; what it returns is stored on the upload's row. */
  begin(accountId: string, uploadId: string): Promise<{ objectPrefix: string | null }>;
  /** A URL to PUT part `partNumber` to until `expiresAt`; `baseUrl` is where this service is reached. */
  partUrl(upload: UploadRow, partNumber: number, expiresAt: Date, baseUrl: string): Promise<string>;
  /** The parts joined in order; UPSTREAM_FAILED or BAD_USER_INPUT when they cannot be read. */
  read(upload: UploadRow): Promise<Buffer>;
  /** The parts received so far and their bytes together. */
  received(upload: UploadRow): Promise<{ parts: number; bytes: number }>;
  /** Deletes the upload's parts. */
  discard(upload: UploadRow): Promise<void>;
}

export const noParts = () => new AppError("BAD_USER_INPUT", "No part of this upload was received.");

// ---------------------------------------------------------------- local

export interface LocalPartStorage extends PartStorage {
  /** Stores a part a signed URL carried; false when the signature is wrong or expired. */
  verify(uploadId: string, partNumber: number, expires: number, signature: string, now?: number): boolean;
  writePart(uploadId: string, partNumber: number, body: Buffer): Promise<void>;
}

export const partFile = (partNumber: number) => `part-${String(partNumber).padStart(5, "0")}`;
const PART_NAME = /^part-\d{5}$/;
/** A part's number from its file or object name (`…part-00042`). */
const partNumberOf = (name: string) => Number(name.slice(-5));

/**
 * Parts are numbered 1, 2, 3… without a gap: one missing was never received (or its PUT failed), and
 * joining the others around it would lose its items, and join the lines either side of it into one.
 */
export function checkNoPartMissing(names: readonly string[]) {
  const missing = names.map(partNumberOf).findIndex((n, i) => n !== i + 1);
  if (missing >= 0)
    throw new AppError(
      "BAD_USER_INPUT",
      `Part ${(missing + 1).toLocaleString("en-US")} of this upload was not received: send it, or abort the upload.`,
    );
}

export function localPartStorage(config: Pick<AppConfig, "dataDir">): LocalPartStorage {
  const root = path.join(config.dataDir, "kv-uploads");
  const key = persistentSecret(config as AppConfig, "kv-upload-key", 32).value;
  const sign = (uploadId: string, partNumber: number, expires: number) =>
    createHmac("sha256", key).update(`${uploadId}:${partNumber}:${expires}`).digest("base64url");
  const dirOf = (uploadId: string) => path.join(root, uploadId);
  const writing = new Map<string, Promise<void>>();
  /**
   * Each upload's received parts' sizes and their total, read from its directory on its first part in
   * this process (the service owns its data directory) and kept as parts arrive: a part's check costs
   * nothing however many parts came before it (reading the directory each time made 10,000 parts cost
   * 10,000² stats).
   */
  const received = new Map<string, { sizes: Map<number, number>; total: number }>();
  const receivedOf = async (uploadId: string) => {
    let upload = received.get(uploadId);
    if (!upload) {
      const sizes = new Map<number, number>();
      for (const name of (await readdir(dirOf(uploadId))).filter((n) => PART_NAME.test(n)))
        sizes.set(partNumberOf(name), (await stat(path.join(dirOf(uploadId), name))).size);
      upload = { sizes, total: [...sizes.values()].reduce((a, b) => a + b, 0) };
      received.set(uploadId, upload);
    }
    return upload;
  };
  const storePart = async (uploadId: string, partNumber: number, body: Buffer) => {
    // The directory begin() made: once the upload is completed or aborted it is gone, and so is the part.
    const dir = dirOf(uploadId);
    // The upload's size is refused as the parts arrive, not only on complete: else parts would fill the disk.
    const upload = await receivedOf(uploadId);
    const total = upload.total - (upload.sizes.get(partNumber) ?? 0) + body.length;
    checkUploadBytes(total);
    // Written aside and renamed, so a part cut off midway never counts as received.
    const temporary = path.join(dir, `${partFile(partNumber)}.${process.pid}.${Date.now()}.tmp`);
    await writeFile(temporary, body);
    await rename(temporary, path.join(dir, partFile(partNumber)));
    upload.sizes.set(partNumber, body.length);
    upload.total = total;
  };
  return {
    bucket: "local",
    async begin(_accountId, uploadId) {
      // Tenants' data: 0700, out of reach of the sandbox processes' user (see ensureDataDir).
      await mkdir(dirOf(uploadId), { recursive: true, mode: 0o700 });
      return { objectPrefix: null };
    },
    async partUrl(upload, partNumber, expiresAt, baseUrl) {
      const expires = Math.floor(expiresAt.getTime() / 1000);
      const query = new URLSearchParams({ expires: String(expires), signature: sign(upload.id, partNumber, expires) });
      return `${baseUrl}/kv-uploads/${upload.id}/parts/${partNumber}?${query}`;
    },
    verify(uploadId, partNumber, expires, signature, now = Date.now()) {
      if (!Number.isSafeInteger(expires) || expires * 1000 < now) return false;
      const expected = Buffer.from(sign(uploadId, partNumber, expires));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    writePart(uploadId, partNumber, body) {
      // One part of an upload at a time, so parts sent side by side cannot together pass the upload's size.
      const previous = writing.get(uploadId) ?? Promise.resolve();
      const written = previous.then(() => storePart(uploadId, partNumber, body));
      const settled = written.catch(() => undefined);
      writing.set(uploadId, settled);
      void settled.then(() => {
        if (writing.get(uploadId) === settled) writing.delete(uploadId);
      });
      return written;
    },
    async read(upload) {
      const names = (await readdir(dirOf(upload.id)).catch(() => [] as string[]))
        .filter((name) => PART_NAME.test(name))
        .sort();
      if (names.length === 0) throw noParts();
      checkNoPartMissing(names);
      const parts: Buffer[] = [];
      let total = 0;
      for (const name of names) {
        const part = await readFile(path.join(dirOf(upload.id), name));
        total += part.length;
        checkUploadBytes(total);
        parts.push(part);
      }
      return Buffer.concat(parts);
    },
    async received(upload) {
      // Read from the directory, not the map: parts may have come to another process (this one only
      // keeps the uploads it received parts of); a directory already gone holds none.
      // Stated side by side: one after another, 2,000 parts took 40–60 ms of the uploads overview.
      const names = (await readdir(dirOf(upload.id)).catch(() => [] as string[])).filter((n) => PART_NAME.test(n));
      const sizes = await Promise.all(
        names.map((name) =>
          stat(path.join(dirOf(upload.id), name)).then(
            (s) => s.size,
            () => null,
          ),
        ),
      );
      const present = sizes.filter((size) => size !== null);
      return { parts: present.length, bytes: present.reduce((a, b) => a + b, 0) };
    },
    async discard(upload) {
      received.delete(upload.id);
      await rm(dirOf(upload.id), { recursive: true, force: true });
    },
  };
}

/**
 * The storage the configuration names: S3 when a bucket is set, else the data directory (then `local`
 * is that same storage, whose part URLs this service answers).
 */
export function partStorage(config: Pick<AppConfig, "dataDir" | "kvUploadS3">): {
  storage: PartStorage;
  local: LocalPartStorage | null;
} {
  if (config.kvUploadS3) return { storage: lazyS3PartStorage(config.kvUploadS3), local: null };
  const local = localPartStorage(config);
  return { storage: local, local };
}

/** S3 part storage whose AWS SDK loads with the first upload: importing it would cost every start. */
function lazyS3PartStorage(settings: KvUploadS3): PartStorage {
  let loaded: Promise<PartStorage> | undefined;
  const s3 = () => {
    loaded ??= import("./part-storage-s3.ts").then((module) => module.s3PartStorage(settings));
    return loaded;
  };
  return {
    bucket: settings.bucket,
    begin: async (accountId, uploadId) => (await s3()).begin(accountId, uploadId),
    partUrl: async (upload, partNumber, expiresAt, baseUrl) =>
      (await s3()).partUrl(upload, partNumber, expiresAt, baseUrl),
    read: async (upload) => (await s3()).read(upload),
    received: async (upload) => (await s3()).received(upload),
    discard: async (upload) => (await s3()).discard(upload),
  };
}
