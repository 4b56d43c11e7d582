import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import type { BlobServiceClient } from "@azure/storage-blob";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestUser } from "../support/api.ts";
import { AZ_ACCOUNT, type Azurite, startAzurite } from "../support/azurite.ts";
import { freePort } from "../unit/datasets/anvil.ts";
import { blockNumbers, NETWORK, type StreamsTestApp, startStreamsAppAsOwner, waitFor } from "./streams-harness.ts";

const S3_SECRET = "S3RVER";

let t: StreamsTestApp;
let owner: TestUser;
let s3rver: S3rver;
let s3Dir: string;
let s3Endpoint: string;
let azurite: Azurite | undefined;
let azEndpoint: string;
let azService: BlobServiceClient;
let sas: string;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner({ blocks: 12 }));

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

  azurite = await startAzurite("stream-container");
  azEndpoint = azurite.endpoint;
  azService = azurite.service;
  sas = azurite.sas;
}, 60_000);

afterAll(async () => {
  await s3rver?.close();
  await azurite?.stop();
  await t?.close();
  if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
});

async function runStream(destination: string, destinationAttributes: Record<string, unknown>) {
  const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
    "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
    {
      input: {
        name: `to ${destination}`,
        network: NETWORK,
        dataset: "BLOCK",
        destination,
        destinationAttributes,
        startRange: 1,
        endRange: 9,
        datasetBatchSize: 3,
        status: "ACTIVE",
      },
    },
  );
  const stream = await waitFor("completion", async () => {
    const { stream } = await owner.client.gqlOk<{
      stream: { status: string; statusReason: string | null; lastDeliveredBlock: number | null };
    }>("query($id: ID!) { stream(id: $id) { status statusReason lastDeliveredBlock } }", { id: createStream.id });
    if (stream.status === "TERMINATED") throw new Error(`terminated: ${stream.statusReason}`);
    return stream.status === "COMPLETED" && stream;
  });
  expect(stream.lastDeliveredBlock).toBe(9);
}

const NINE = Array.from({ length: 9 }, (_, i) => i + 1);

describe("stream delivery to object stores", () => {
  it("writes each block once, in order, to S3", async () => {
    await runStream("S3", {
      accessKey: "S3RVER",
      secretKey: S3_SECRET,
      bucket: "stream-bucket",
      endpoint: s3Endpoint,
      useSsl: false,
      objectPrefix: "eth/",
      fileType: "JSON",
      fileCompression: "NONE",
    });
    const client = new S3Client({
      region: "us-east-1",
      endpoint: `http://${s3Endpoint}`,
      forcePathStyle: true,
      credentials: { accessKeyId: "S3RVER", secretAccessKey: S3_SECRET },
    });
    try {
      const list = await client.send(new ListObjectsV2Command({ Bucket: "stream-bucket", Prefix: "eth/" }));
      const keys = (list.Contents ?? []).map((o) => o.Key as string).sort();
      expect(keys).toEqual([
        "eth/000000000001-000000000003.json",
        "eth/000000000004-000000000006.json",
        "eth/000000000007-000000000009.json",
      ]);
      const blocks: number[] = [];
      for (const key of keys) {
        const r = await client.send(new GetObjectCommand({ Bucket: "stream-bucket", Key: key }));
        blocks.push(
          ...blockNumbers(JSON.parse(await (r.Body as { transformToString(): Promise<string> }).transformToString())),
        );
      }
      expect(blocks).toEqual(NINE);
    } finally {
      client.destroy();
    }
  });

  it("writes each block once, in order, to Azure Blob", async () => {
    await runStream("AZURE", {
      storageAccount: AZ_ACCOUNT,
      sasToken: `?${sas}`,
      container: "stream-container",
      blobPrefix: "eth/",
      endpoint: azEndpoint,
    });
    const container = azService.getContainerClient("stream-container");
    const names: string[] = [];
    for await (const b of container.listBlobsFlat({ prefix: "eth/" })) names.push(b.name);
    names.sort();
    expect(names).toEqual([
      "eth/000000000001-000000000003.json",
      "eth/000000000004-000000000006.json",
      "eth/000000000007-000000000009.json",
    ]);
    const blocks: number[] = [];
    for (const name of names) {
      const bytes = await container.getBlobClient(name).downloadToBuffer();
      blocks.push(...blockNumbers(JSON.parse(bytes.toString("utf8"))));
    }
    expect(blocks).toEqual(NINE);
  });
});
