import { createHash, createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signIn, startTestApp, type TestApp } from "../support/api.ts";
import { freePort } from "../support/ports.ts";

// Multipart uploads with an S3 bucket configured: part URLs are S3 presigned URLs the client PUTs each
// part to directly (an object per part); complete reads them in order and deletes them; abort deletes them.
// Against s3rver (an S3-compatible server from npm) on loopback.

const BUCKET = "kv-uploads";
let s3rver: S3rver;
let s3Dir: string;
let endpoint: string;
let app: TestApp;
let s3: S3Client;

beforeAll(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), "kv-s3rver-"));
  const port = await freePort();
  s3rver = new S3rver({
    port,
    address: "127.0.0.1",
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  await s3rver.run();
  endpoint = `http://127.0.0.1:${port}`;
  // The AWS SDK's usual credential source (s3rver's fixed key pair).
  process.env.AWS_ACCESS_KEY_ID = "S3RVER";
  process.env.AWS_SECRET_ACCESS_KEY = "S3RVER";
  app = await startTestApp({ NODEPLANE_KV_S3_BUCKET: BUCKET, NODEPLANE_KV_S3_ENDPOINT: endpoint });
  s3 = new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  });
}, 60_000);
afterAll(async () => {
  await app?.close();
  await s3rver?.close();
  if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
});

async function objects() {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (listed.Contents ?? []).map((o) => o.Key);
}
const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key: string | Buffer, text: string) => createHmac("sha256", key).update(text).digest();

/**
 * The signature S3 computes for a presigned PUT (Signature Version 4, query string), written out here
 * from AWS's documentation: s3rver checks no V4 signature, so the test does.
 */
function expectedSignature(url: URL, secret: string): string {
  const query = [...url.searchParams]
    .filter(([name]) => name !== "X-Amz-Signature")
    .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
    .sort()
    .join("&");
  const canonical = ["PUT", url.pathname, query, `host:${url.host}`, "", "host", "UNSIGNED-PAYLOAD"].join("\n");
  const date = url.searchParams.get("X-Amz-Date") ?? "";
  const scope = (url.searchParams.get("X-Amz-Credential") ?? "").split("/").slice(1).join("/");
  const toSign = ["AWS4-HMAC-SHA256", date, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
  const [day, region, service] = scope.split("/");
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), "aws4_request");
  return hmac(key, toSign).toString("hex");
}

describe("multipart upload to S3", () => {
  it("PUTs parts to presigned URLs, completes into an address book and leaves nothing in the bucket", async () => {
    const owner = await signIn(app, "demo@nodeplane.local", "demo-password-for-tests");
    const { initiateAddressBookUpload: upload } = await owner.client.gqlOk<{
      initiateAddressBookUpload: { uploadId: string; bucket: string };
    }>('mutation { initiateAddressBookUpload(input: { key: "s3-book" }) { uploadId key bucket } }');
    expect(upload.bucket).toBe(BUCKET);

    const lines = Array.from({ length: 250_000 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
    const file = Buffer.from(`${lines.join("\n")}\n`);
    const partSize = 5 * 1024 * 1024;
    const parts = Math.ceil(file.length / partSize);
    expect(parts).toBe(3);
    for (let n = 1; n <= parts; n++) {
      const { kvUploadPartUrl } = await owner.client.gqlOk<{ kvUploadPartUrl: { url: string } }>(
        "mutation($input: KvUploadPartInput!) { kvUploadPartUrl(input: $input) { url partNumber expiresAt } }",
        { input: { uploadId: upload.uploadId, partNumber: n } },
      );
      const url = new URL(kvUploadPartUrl.url);
      expect(url.origin).toBe(endpoint);
      expect(url.pathname).toMatch(new RegExp(`^/${BUCKET}/kv-uploads/[0-9a-f-]+/${upload.uploadId}/part-0000${n}$`));
      expect(url.searchParams.get("X-Amz-Signature")).toBe(expectedSignature(url, "S3RVER"));
      const body = new Uint8Array(file.subarray((n - 1) * partSize, n * partSize));
      const response = await fetch(url, { method: "PUT", body });
      expect(response.status, `part ${n}: ${await response.clone().text()}`).toBe(200);
    }
    const { completeKvUpload } = await owner.client.gqlOk<{ completeKvUpload: unknown }>(
      `mutation { completeKvUpload(uploadId: "${upload.uploadId}") { success key addedCount } }`,
    );
    expect(completeKvUpload).toEqual({ success: true, key: "s3-book", addedCount: 250_000 });
    expect(await objects()).toEqual([]);
  }, 120_000);

  it("lists an upload's parts from the bucket; abort deletes them", async () => {
    const owner = await signIn(app, "demo@nodeplane.local", "demo-password-for-tests");
    const { initiateListUpload: upload } = await owner.client.gqlOk<{ initiateListUpload: { uploadId: string } }>(
      'mutation { initiateListUpload(input: { key: "s3-list" }) { uploadId } }',
    );
    const { kvUploadPartUrl } = await owner.client.gqlOk<{ kvUploadPartUrl: { url: string } }>(
      `mutation { kvUploadPartUrl(input: { uploadId: "${upload.uploadId}", partNumber: 1 }) { url } }`,
    );
    expect((await fetch(kvUploadPartUrl.url, { method: "PUT", body: "a\nb\n" })).status).toBe(200);
    expect(await objects()).toHaveLength(1);
    const { kvUploads } = await owner.client.gqlOk<{
      kvUploads: { edges: { node: { uploadId: string; partsReceived: number; bytesReceived: number } }[] };
    }>("{ kvUploads { edges { node { uploadId partsReceived bytesReceived } } } }");
    expect(kvUploads.edges.map((e) => e.node)).toContainEqual({
      uploadId: upload.uploadId,
      partsReceived: 1,
      bytesReceived: 4,
    });
    await owner.client.gqlOk(`mutation { abortKvUpload(uploadId: "${upload.uploadId}") { success } }`);
    expect(await objects()).toEqual([]);
  });
});
