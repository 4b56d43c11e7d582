import { createHash, createHmac } from "node:crypto";
import type { KvUploadS3 } from "../../platform/config.ts";
import { AppError } from "../../platform/errors.ts";
import { checkUploadBytes } from "./limits.ts";
import { checkNoPartMissing, noParts, type PartStorage, partFile } from "./part-storage.ts";
import type { UploadRow } from "./store.ts";

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
export async function s3PartStorage(settings: KvUploadS3): Promise<PartStorage> {
  // Imported here, not at the top: `npm start`'s bundle holds this module, and there a top-level import
  // would load the SDK at every start. The signer and request type are those the AWS SDK presigns with
  // (@aws-sdk/s3-request-presigner wraps these two).
  const [{ DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client }, { HttpRequest }, { SignatureV4 }] =
    await Promise.all([import("@aws-sdk/client-s3"), import("@smithy/protocol-http"), import("@smithy/signature-v4")]);
  const client = new S3Client(s3ClientConfig(settings));
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
        checkNoPartMissing(parts.map((part) => part.Key));
        checkUploadBytes(parts.reduce((sum, part) => sum + part.Size, 0));
        const bodies: Buffer[] = [];
        for (const part of parts) {
          const object = await client.send(new GetObjectCommand({ Bucket, Key: part.Key }));
          bodies.push(Buffer.from((await object.Body?.transformToByteArray()) ?? []));
        }
        return Buffer.concat(bodies);
      }),
    received: (upload) =>
      call("list the upload's parts", async () => {
        const parts = await partsOf(upload);
        return { parts: parts.length, bytes: parts.reduce((sum, part) => sum + part.Size, 0) };
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
