import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
// The signer and request type the AWS SDK presigns with (@aws-sdk/s3-request-presigner wraps these two).
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import { type AppConfig, type KvUploadS3, persistentSecret } from "../../platform/config.ts";
import { AppError } from "../../platform/errors.ts";
import { MAX_UPLOAD_BYTES } from "./limits.ts";
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
  /** Deletes the upload's parts. */
  discard(upload: UploadRow): Promise<void>;
}

const noParts = () => new AppError("BAD_USER_INPUT", "No part of this upload was received.");
const tooLarge = () => new AppError("BAD_USER_INPUT", `An upload is at most ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB.`);

// ---------------------------------------------------------------- local

export interface LocalPartStorage extends PartStorage {
  /** Stores a part a signed URL carried; false when the signature is wrong or expired. */
  verify(uploadId: string, partNumber: number, expires: number, signature: string, now?: number): boolean;
  writePart(uploadId: string, partNumber: number, body: Buffer): Promise<void>;
}

const partFile = (partNumber: number) => `part-${String(partNumber).padStart(5, "0")}`;

export function localPartStorage(config: Pick<AppConfig, "dataDir">): LocalPartStorage {
  const root = path.join(config.dataDir, "kv-uploads");
  const key = persistentSecret(config as AppConfig, "kv-upload-key", 32).value;
  const sign = (uploadId: string, partNumber: number, expires: number) =>
    createHmac("sha256", key).update(`${uploadId}:${partNumber}:${expires}`).digest("base64url");
  const dirOf = (uploadId: string) => path.join(root, uploadId);
  return {
    bucket: "local",
    async begin(_accountId, uploadId) {
      await mkdir(dirOf(uploadId), { recursive: true });
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
    async writePart(uploadId, partNumber, body) {
      // The directory begin() made: once the upload is completed or aborted it is gone, and so is the part.
      const dir = dirOf(uploadId);
      // Written aside and renamed, so a part cut off midway never counts as received.
      const temporary = path.join(dir, `${partFile(partNumber)}.${process.pid}.${Date.now()}.tmp`);
      await writeFile(temporary, body);
      await rename(temporary, path.join(dir, partFile(partNumber)));
    },
    async read(upload) {
      const names = (await readdir(dirOf(upload.id)).catch(() => [] as string[]))
        .filter((name) => /^part-\d{5}$/.test(name))
        .sort();
      if (names.length === 0) throw noParts();
      const parts: Buffer[] = [];
      let total = 0;
      for (const name of names) {
        const part = await readFile(path.join(dirOf(upload.id), name));
        total += part.length;
        if (total > MAX_UPLOAD_BYTES) throw tooLarge();
        parts.push(part);
      }
      return Buffer.concat(parts);
    },
    async discard(upload) {
      await rm(dirOf(upload.id), { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- S3

class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret
      ? createHmac("sha256", typeof secret === "string" ? secret : Buffer.from(secret as ArrayBuffer))
      : createHash("sha256");
  }
  update(data: string | ArrayBuffer | ArrayBufferView) {
    this.hash.update(typeof data === "string" ? data : Buffer.from(data as ArrayBuffer));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

const upstream = (what: string) => new AppError("UPSTREAM_FAILED", `The upload store could not ${what}.`);

/**
 * Parts as objects of their own under the upload's prefix (`…/part-00001`), each PUT to a presigned
 * URL: any part may be sent again, parts have no minimum size (S3's multipart upload wants 5 MiB), and
 * every S3-compatible server takes them. Complete reads them in order; abort deletes them.
 */
export function s3PartStorage(settings: KvUploadS3, client = new S3Client(s3ClientConfig(settings))): PartStorage {
  const Bucket = settings.bucket;
  const signer = new SignatureV4({
    service: "s3",
    region: settings.region,
    credentials: () => client.config.credentials(),
    sha256: Sha256,
    uriEscapePath: false,
  });
  const objectUrl = (objectKey: string) => {
    const encodedKey = objectKey.split("/").map(encodeURIComponent).join("/");
    if (settings.endpoint) {
      const base = new URL(settings.endpoint);
      return settings.forcePathStyle
        ? new URL(`${base.origin}/${Bucket}/${encodedKey}`)
        : new URL(`${base.protocol}//${Bucket}.${base.host}/${encodedKey}`);
    }
    return new URL(`https://${Bucket}.s3.${settings.region}.amazonaws.com/${encodedKey}`);
  };
  const prefixOf = (upload: UploadRow) => {
    if (!upload.objectPrefix) throw upstream("find this upload");
    return upload.objectPrefix;
  };
  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw upstream(what);
    }
  };
  /** The upload's part objects, in part order. */
  const partsOf = async (upload: UploadRow) => {
    const parts: { Key: string; Size: number }[] = [];
    let ContinuationToken: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefixOf(upload), ContinuationToken }));
      for (const object of page.Contents ?? [])
        if (object.Key && /\/part-\d{5}$/.test(object.Key)) parts.push({ Key: object.Key, Size: object.Size ?? 0 });
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    return parts.sort((a, b) => a.Key.localeCompare(b.Key));
  };

  return {
    bucket: Bucket,
    begin: async (accountId, uploadId) => ({ objectPrefix: `kv-uploads/${accountId}/${uploadId}/` }),
    partUrl: (upload, partNumber, expiresAt) =>
      call("sign a part URL", async () => {
        const url = objectUrl(`${prefixOf(upload)}${partFile(partNumber)}`);
        const request = new HttpRequest({
          method: "PUT",
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port ? Number(url.port) : undefined,
          path: url.pathname,
          headers: { host: url.host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" },
        });
        const expiresIn = Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
        const signed = await signer.presign(request, { expiresIn });
        const query = new URLSearchParams();
        for (const [name, value] of Object.entries(signed.query ?? {})) {
          if (typeof value === "string") query.set(name, value);
        }
        return `${url.origin}${url.pathname}?${query}`;
      }),
    read: (upload) =>
      call("read the upload", async () => {
        const parts = await partsOf(upload);
        if (parts.length === 0) throw noParts();
        if (parts.reduce((sum, part) => sum + part.Size, 0) > MAX_UPLOAD_BYTES) throw tooLarge();
        const bodies: Buffer[] = [];
        for (const part of parts) {
          const object = await client.send(new GetObjectCommand({ Bucket, Key: part.Key }));
          bodies.push(Buffer.from((await object.Body?.transformToByteArray()) ?? []));
        }
        return Buffer.concat(bodies);
      }),
    discard: (upload) =>
      call("delete the upload's parts", async () => {
        for (const part of await partsOf(upload)) await client.send(new DeleteObjectCommand({ Bucket, Key: part.Key }));
      }),
  };
}

export function s3ClientConfig(settings: KvUploadS3) {
  return {
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
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
  if (config.kvUploadS3) return { storage: s3PartStorage(config.kvUploadS3), local: null };
  const local = localPartStorage(config);
  return { storage: local, local };
}
