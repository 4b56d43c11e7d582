import { randomBytes } from "node:crypto";
import type { S3Client, S3ClientConfig } from "@aws-sdk/client-s3";
import type { EgressPolicy } from "../../platform/egress.ts";
import { s3EndpointUrl } from "./addresses.ts";
import { assertCompression, encodeObject, errorMessage, isEgressRefusal, objectName } from "./common.ts";
import {
  type Compression,
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationContext,
  DestinationError,
  type FileType,
  type S3Attributes,
  type TestResult,
} from "./types.ts";

/**
 * One object per batch under `objectPrefix` (named `<prefix><start>-<end>.json[.gz]|.parquet`, block
 * numbers zero-padded), on AWS S3 or any S3-compatible service (custom endpoint, path-style
 * addressing). JSON with GZIP is a gzipped file with content-encoding gzip; PARQUET uses GZIP as its
 * page codec. BZIP2 is refused (see common.ts).
 *
 * test(): HeadBucket (bucket exists, credentials accepted), then writes a tiny probe object
 * `<prefix>.nodeplane-probe-<random>` and deletes it, since write permission cannot be checked any
 * other way.
 */
type S3Sdk = typeof import("@aws-sdk/client-s3");
let sdk: Promise<S3Sdk> | undefined;

/** The AWS SDK, loaded with the first S3 destination: importing it would cost every start. */
function s3Sdk(): Promise<S3Sdk> {
  sdk ??= import("@aws-sdk/client-s3");
  return sdk;
}

export class S3Destination implements Destination {
  readonly type = "S3";
  private readonly clientConfig: S3ClientConfig;
  private client: Promise<{ sdk: S3Sdk; client: S3Client }> | undefined;
  private readonly fileType: FileType;
  private readonly compression: Compression;

  constructor(
    private readonly attrs: S3Attributes,
    private readonly ctx: DestinationContext,
    egress: EgressPolicy,
  ) {
    this.compression = assertCompression(attrs.fileCompression);
    this.fileType = attrs.fileType ?? "JSON";
    if (this.fileType !== "JSON" && this.fileType !== "PARQUET") {
      throw new DestinationError(`unknown file type ${String(this.fileType)}`, { retryable: false });
    }
    if (!attrs.bucket) throw new DestinationError("bucket is required", { retryable: false });
    const endpoint = s3EndpointUrl(attrs);
    this.clientConfig = {
      region: attrs.region ?? "us-east-1",
      endpoint,
      forcePathStyle: Boolean(endpoint),
      credentials: { accessKeyId: attrs.accessKey, secretAccessKey: attrs.secretKey },
      maxAttempts: 1,
      requestHandler: {
        requestTimeout: 30_000,
        connectionTimeout: 10_000,
        // The endpoint is the tenant's: connections go where the egress policy allows.
        httpAgent: egress.httpAgent({ keepAlive: true }),
        httpsAgent: egress.httpsAgent({ keepAlive: true }),
      },
    };
  }

  private connect(): Promise<{ sdk: S3Sdk; client: S3Client }> {
    this.client ??= s3Sdk().then((sdk) => ({ sdk, client: new sdk.S3Client(this.clientConfig) }));
    return this.client;
  }

  async test(): Promise<TestResult> {
    const t = performance.now();
    const probe = `${this.attrs.objectPrefix ?? ""}.nodeplane-probe-${randomBytes(6).toString("hex")}`;
    try {
      const { sdk, client } = await this.connect();
      await client.send(new sdk.HeadBucketCommand({ Bucket: this.attrs.bucket }));
      await client.send(new sdk.PutObjectCommand({ Bucket: this.attrs.bucket, Key: probe, Body: "probe" }));
      await client.send(new sdk.DeleteObjectCommand({ Bucket: this.attrs.bucket, Key: probe }));
      return {
        ok: true,
        message: `bucket ${this.attrs.bucket} reachable; wrote and removed a probe object`,
        durationMs: performance.now() - t,
      };
    } catch (e) {
      return { ok: false, message: `S3: ${describe(e)}`, durationMs: performance.now() - t };
    }
  }

  async deliver(batch: DeliveryBatch): Promise<DeliveryAck> {
    const t = performance.now();
    const key = objectName(this.attrs.objectPrefix, batch, this.fileType, this.compression);
    const obj = encodeObject(this.ctx, batch, this.fileType, this.compression);
    try {
      const { sdk, client } = await this.connect();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.attrs.bucket,
          Key: key,
          Body: obj.body,
          ContentType: obj.contentType,
          ContentEncoding: obj.contentEncoding,
        }),
      );
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      const retryable = (status === undefined && !isEgressRefusal(e)) || (status ?? 0) >= 500 || status === 429;
      throw new DestinationError(`S3: ${describe(e)}`, { retryable, status });
    }
    return { bytes: obj.body.length, durationMs: performance.now() - t, detail: `s3://${this.attrs.bucket}/${key}` };
  }

  async close(): Promise<void> {
    if (this.client) (await this.client).client.destroy();
  }
}

function describe(e: unknown): string {
  const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const name = e instanceof Error ? e.name : "";
  const msg = errorMessage(e);
  // HeadBucket errors carry no body, so the SDK's message is just the status name.
  if (status === 404 || name === "NotFound" || name === "NoSuchBucket") return `bucket not found (${msg})`;
  if (status === 403 || name === "Forbidden" || name === "AccessDenied") return `access denied (${msg})`;
  return status ? `${msg} (HTTP ${status})` : msg;
}
