import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { parquetReadObjects } from "hyparquet";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AzureAttributes,
  BZIP2_UNSUPPORTED,
  createDestination,
  type S3Attributes,
} from "../../../server/dataplane/destinations/index.ts";
import { AZ_ACCOUNT, AZ_KEY, type Azurite, startAzurite } from "../../support/azurite.ts";
import { testEgress } from "../../support/egress.ts";
import { freePort } from "../datasets/anvil.ts";

const ctx = { streamId: "s-1", network: "local", dataset: "BLOCK" };
const batch = { startBlock: 100, endBlock: 101, payloadJson: '[{"number":"0x64"},{"number":"0x65"}]' };

// ---- S3 (s3rver on loopback) ----
let s3rver: S3rver;
let s3Dir: string;
let s3Endpoint: string;
const S3_SECRET = "S3RVER";
let s3Attrs: S3Attributes;

// ---- Azure (Azurite on loopback, the well-known dev account) ----
let azurite: Azurite | undefined;
let azEndpoint: string;
let sas: string;
let azAttrs: AzureAttributes;

beforeAll(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), "s3rver-"));
  const s3Port = await freePort();
  s3rver = new S3rver({
    port: s3Port,
    address: "127.0.0.1",
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: "stream-bucket", configs: [] }],
  });
  await s3rver.run();
  s3Endpoint = `127.0.0.1:${s3Port}`;
  s3Attrs = {
    type: "S3",
    accessKey: "S3RVER",
    secretKey: S3_SECRET,
    bucket: "stream-bucket",
    endpoint: s3Endpoint,
    useSsl: false,
    objectPrefix: "eth/",
    fileType: "JSON",
    fileCompression: "NONE",
  };

  azurite = await startAzurite("stream-container");
  azEndpoint = azurite.endpoint;
  sas = azurite.sas;
  azAttrs = {
    type: "AZURE",
    storageAccount: AZ_ACCOUNT,
    sasToken: `?${sas}`,
    container: "stream-container",
    blobPrefix: "eth/",
    endpoint: azEndpoint,
  };
}, 60_000);

afterAll(async () => {
  await s3rver?.close();
  await azurite?.stop();
  rmSync(s3Dir, { recursive: true, force: true });
});

async function s3Get(key: string): Promise<Buffer> {
  const client = new S3Client({
    region: "us-east-1",
    endpoint: `http://${s3Endpoint}`,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: S3_SECRET },
  });
  const r = await client.send(new GetObjectCommand({ Bucket: "stream-bucket", Key: key }));
  const bytes = Buffer.from(await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
  client.destroy();
  return bytes;
}

const gunzipPage = (input: Uint8Array) => new Uint8Array(gunzipSync(input));

async function readParquet(bytes: Buffer) {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return parquetReadObjects({ file, compressors: { GZIP: gunzipPage } });
}

describe("S3 destination (s3rver)", () => {
  it("test() reaches the bucket and leaves no probe object behind", async () => {
    const d = createDestination(s3Attrs, ctx, { egress: testEgress });
    expect(await d.test()).toMatchObject({ ok: true });
    const client = new S3Client({
      region: "us-east-1",
      endpoint: `http://${s3Endpoint}`,
      forcePathStyle: true,
      credentials: { accessKeyId: "S3RVER", secretAccessKey: S3_SECRET },
    });
    const list = await client.send(new ListObjectsV2Command({ Bucket: "stream-bucket" }));
    expect((list.Contents ?? []).filter((o) => o.Key?.includes("probe"))).toEqual([]);
    client.destroy();
    await d.close();
  });

  it("writes JSON, gzipped JSON and Parquet objects under the prefix", async () => {
    const plain = createDestination(s3Attrs, ctx, { egress: testEgress });
    expect((await plain.deliver(batch)).detail).toBe("s3://stream-bucket/eth/000000000100-000000000101.json");
    expect((await s3Get("eth/000000000100-000000000101.json")).toString()).toBe(batch.payloadJson);

    const gz = createDestination({ ...s3Attrs, fileCompression: "GZIP" }, ctx, { egress: testEgress });
    await gz.deliver(batch);
    expect(gunzipSync(await s3Get("eth/000000000100-000000000101.json.gz")).toString()).toBe(batch.payloadJson);

    const pq = createDestination({ ...s3Attrs, fileType: "PARQUET", fileCompression: "GZIP" }, ctx, {
      egress: testEgress,
    });
    await pq.deliver(batch);
    const rows = await readParquet(await s3Get("eth/000000000100-000000000101.parquet"));
    // hyparquet hands JSON columns back as their text.
    expect(rows.map((r) => [r.network, r.batch_start, r.batch_end, JSON.parse(r.data)])).toEqual([
      ["local", 100n, 101n, { number: "0x64" }],
      ["local", 100n, 101n, { number: "0x65" }],
    ]);
  });

  it("reports a missing bucket and bad credentials without revealing the secret key", async () => {
    const missing = await createDestination({ ...s3Attrs, bucket: "no-such-bucket" }, ctx, {
      egress: testEgress,
    }).test();
    expect(missing).toMatchObject({ ok: false });
    expect(missing.message).toMatch(/^S3: bucket not found/);
    const secretKey = "wrong-secret-key-0123456789abcdef";
    // s3rver checks the access key (not every signature), so both are wrong here.
    const d = createDestination({ ...s3Attrs, accessKey: "NOT-A-KEY", secretKey }, ctx, { egress: testEgress });
    const bad = await d.test();
    expect(bad.ok).toBe(false);
    expect(bad.message).not.toContain(secretKey);
    const err = (await d.deliver(batch).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/^S3: /);
    expect(err.message).not.toContain(secretKey);
  });

  it("refuses BZIP2 with a clear reason", () => {
    expect(() => createDestination({ ...s3Attrs, fileCompression: "BZIP2" }, ctx, { egress: testEgress })).toThrow(
      BZIP2_UNSUPPORTED,
    );
  });
});

describe("Azure destination (Azurite)", () => {
  it("test() checks the container with the SAS token and leaves no probe blob", async () => {
    expect(await createDestination(azAttrs, ctx, { egress: testEgress }).test()).toMatchObject({ ok: true });
    const service = new BlobServiceClient(azEndpoint, new StorageSharedKeyCredential(AZ_ACCOUNT, AZ_KEY));
    const names: string[] = [];
    for await (const b of service.getContainerClient("stream-container").listBlobsFlat()) names.push(b.name);
    expect(names.filter((n) => n.includes("probe"))).toEqual([]);
  });

  it("writes block blobs as JSON and Parquet", async () => {
    const d = createDestination({ ...azAttrs, fileCompression: "GZIP" }, ctx, { egress: testEgress });
    expect((await d.deliver(batch)).detail).toBe("stream-container/eth/000000000100-000000000101.json.gz");
    const service = new BlobServiceClient(azEndpoint, new StorageSharedKeyCredential(AZ_ACCOUNT, AZ_KEY));
    const container = service.getContainerClient("stream-container");
    const gz = await container.getBlockBlobClient("eth/000000000100-000000000101.json.gz").downloadToBuffer();
    expect(gunzipSync(gz).toString()).toBe(batch.payloadJson);
    await createDestination({ ...azAttrs, fileType: "PARQUET" }, ctx, { egress: testEgress }).deliver(batch);
    const pq = await container.getBlockBlobClient("eth/000000000100-000000000101.parquet").downloadToBuffer();
    expect((await readParquet(pq)).map((r) => JSON.parse(r.data))).toEqual([{ number: "0x64" }, { number: "0x65" }]);
  });

  it("reports a missing container and an unreachable service without the SAS token", async () => {
    const missing = await createDestination({ ...azAttrs, container: "no-such-container" }, ctx, {
      egress: testEgress,
    }).test();
    expect(missing.ok).toBe(false);
    expect(missing.message).toMatch(/container not found/);
    const down = createDestination({ ...azAttrs, endpoint: `http://127.0.0.1:1/${AZ_ACCOUNT}` }, ctx, {
      egress: testEgress,
    });
    const t = await down.test();
    expect(t.ok).toBe(false);
    const err = (await down.deliver(batch).catch((e: unknown) => e)) as Error;
    const sig = new URLSearchParams(sas).get("sig") as string;
    for (const text of [t.message, err.message]) {
      expect(text).toMatch(/^Azure Blob: /);
      expect(text).not.toContain(sas);
      expect(text).not.toContain(sig);
      expect(text).not.toContain(encodeURIComponent(sig));
    }
  });
});
