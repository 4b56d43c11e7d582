import { existsSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { kvUploads } from "../../server/domains/kv/tables.ts";
import { sweepExpiredUploads } from "../../server/domains/kv/uploads.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { signUp, type TestUser, useTestApp } from "../support/api.ts";

// Open multipart uploads against a careless or hostile user: the plan's cap on open uploads, uploads left
// behind swept by the service itself, and the list of one's open uploads (with abort), seen by no other account.

const ctx = useTestApp();
const db = () => openDatabase(ctx.app.database.url, 2);

async function initiate(user: TestUser, key: string, kind: "List" | "AddressBook" = "List") {
  return user.client.gql<Record<string, { uploadId: string }>>(
    `mutation($input: InitiateKvUploadInput!) { initiate${kind}Upload(input: $input) { uploadId key bucket } }`,
    { input: { key } },
  );
}

async function initiated(user: TestUser, key: string, kind: "List" | "AddressBook" = "List") {
  const answer = await initiate(user, key, kind);
  expect(answer.errors).toBeUndefined();
  return Object.values(answer.data ?? {})[0].uploadId;
}

async function putPart(user: TestUser, uploadId: string, partNumber: number, body: string) {
  const { kvUploadPartUrl } = await user.client.gqlOk<{ kvUploadPartUrl: { url: string } }>(
    "mutation($input: KvUploadPartInput!) { kvUploadPartUrl(input: $input) { url } }",
    { input: { uploadId, partNumber } },
  );
  const response = await fetch(kvUploadPartUrl.url, { method: "PUT", body });
  expect(response.status).toBe(200);
}

interface OpenUpload {
  uploadId: string;
  key: string;
  kind: string;
  partsReceived: number;
  bytesReceived: number;
  startedAt: string;
  expiresAt: string;
}

async function openUploads(user: TestUser, first?: number, after?: string) {
  const { kvUploads } = await user.client.gqlOk<{
    kvUploads: {
      edges: { node: OpenUpload }[];
      pageInfo: { endCursor: string; hasNextPage: boolean };
      totalCount: number;
    };
  }>(
    `query($first: Int, $after: String) { kvUploads(first: $first, after: $after) {
      edges { node { uploadId key kind partsReceived bytesReceived startedAt expiresAt } }
      pageInfo { endCursor hasNextPage } totalCount } }`,
    { first, after },
  );
  return kvUploads;
}

const abort = (user: TestUser, uploadId: string) =>
  user.client.gql<{ abortKvUpload: { success: boolean } }>(
    "mutation($id: ID!) { abortKvUpload(uploadId: $id) { success message } }",
    { id: uploadId },
  );

describe("open uploads per account", () => {
  it("are capped by the plan at initiate, naming the limit; an aborted or expired one no longer counts", async () => {
    const owner = await signUp(ctx.app);
    const ids = [await initiated(owner, "a"), await initiated(owner, "b", "AddressBook"), await initiated(owner, "c")];
    const refused = await initiate(owner, "d");
    expect(refused.errors?.[0].extensions?.code).toBe("CONFLICT");
    expect(refused.errors?.[0].message).toBe(
      "Your plan allows 3 open uploads at once, and this account has them. Complete or abort one (the Key-value store overview lists them), or wait until one expires (24 hours after it began).",
    );
    const { kvOverview } = await owner.client.gqlOk<{ kvOverview: { openUploads: number; openUploadLimit: number } }>(
      "{ kvOverview { openUploads openUploadLimit } }",
    );
    expect(kvOverview).toEqual({ openUploads: 3, openUploadLimit: 3 });

    expect((await abort(owner, ids[0])).data?.abortKvUpload.success).toBe(true);
    await initiated(owner, "d");
    expect((await initiate(owner, "e")).errors?.[0].extensions?.code).toBe("CONFLICT");

    const database = db();
    try {
      await database
        .update(kvUploads)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(kvUploads.id, ids[1]));
    } finally {
      await database.$client.end();
    }
    await initiated(owner, "e");
  });

  it("taken side by side, still stop at the plan's cap", async () => {
    const owner = await signUp(ctx.app);
    const answers = await Promise.all(["a", "b", "c", "d", "e", "f"].map((key) => initiate(owner, key)));
    expect(answers.filter((a) => a.errors === undefined)).toHaveLength(3);
    expect((await openUploads(owner)).totalCount).toBe(3);
  });
});

describe("uploads left behind", () => {
  it("are swept by the service's housekeeping, their parts deleted, without their account initiating again", async () => {
    const owner = await signUp(ctx.app);
    const left = await initiated(owner, "left");
    await putPart(owner, left, 1, "one\ntwo\n");
    const kept = await initiated(owner, "kept");
    const dir = join(ctx.app.dataDir, "kv-uploads", left);
    expect(existsSync(dir)).toBe(true);

    const database = db();
    try {
      await database
        .update(kvUploads)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(kvUploads.id, left));
      expect(await sweepExpiredUploads(database, ctx.app.services.kvParts)).toBeGreaterThanOrEqual(1);
      expect(existsSync(dir)).toBe(false);
      const rows = await database
        .select({ id: kvUploads.id })
        .from(kvUploads)
        .where(eq(kvUploads.accountId, owner.viewer.id));
      expect(rows.map((r) => r.id)).toEqual([kept]);
      // Nothing expired: a pass ends nothing.
      expect(await sweepExpiredUploads(database, ctx.app.services.kvParts)).toBe(0);
    } finally {
      await database.$client.end();
    }
  });
});

describe("the list of open uploads", () => {
  it("shows each with its key, kind, parts and bytes received, start and expiry, newest first, paged", async () => {
    const owner = await signUp(ctx.app);
    const list = await initiated(owner, "list-upload");
    await putPart(owner, list, 1, "one\ntwo\n");
    await putPart(owner, list, 2, "three\n");
    const book = await initiated(owner, "book-upload", "AddressBook");

    const all = await openUploads(owner);
    expect(all.totalCount).toBe(2);
    expect(all.edges.map((e) => e.node)).toMatchObject([
      { uploadId: book, key: "book-upload", kind: "ADDRESS_BOOK", partsReceived: 0, bytesReceived: 0 },
      { uploadId: list, key: "list-upload", kind: "LIST", partsReceived: 2, bytesReceived: 14 },
    ]);
    const { startedAt, expiresAt } = all.edges[1].node;
    // Started as the database clock saw the insert, expiring 24 hours after the service's clock at initiate.
    expect(Math.abs(new Date(expiresAt).getTime() - new Date(startedAt).getTime() - 24 * 3600_000)).toBeLessThan(5_000);

    const first = await openUploads(owner, 1);
    expect(first.edges.map((e) => e.node.uploadId)).toEqual([book]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await openUploads(owner, 1, first.pageInfo.endCursor);
    expect(second.edges.map((e) => e.node.uploadId)).toEqual([list]);
    expect(second.pageInfo.hasNextPage).toBe(false);

    expect((await abort(owner, list)).data?.abortKvUpload.success).toBe(true);
    expect((await openUploads(owner)).edges.map((e) => e.node.uploadId)).toEqual([book]);
  });

  it("is the account's own: another account neither sees nor aborts its uploads", async () => {
    const owner = await signUp(ctx.app);
    const other = await signUp(ctx.app);
    const uploadId = await initiated(owner, "mine");
    await putPart(owner, uploadId, 1, "secret\n");

    expect(await openUploads(other)).toMatchObject({ edges: [], totalCount: 0 });
    const refused = await abort(other, uploadId);
    expect(refused.errors?.[0].extensions?.code).toBe("NOT_FOUND");
    expect((await openUploads(owner)).edges.map((e) => e.node)).toMatchObject([{ uploadId, partsReceived: 1 }]);
    expect(existsSync(join(ctx.app.dataDir, "kv-uploads", uploadId))).toBe(true);
  });
});

describe("completing an upload", () => {
  it("side by side, one complete reads and adds the file; the others are refused at once", async () => {
    // Each read the whole file before finding the upload taken: ten of one 64 MiB upload held 1.8 GB.
    const owner = await signUp(ctx.app);
    const uploadId = await initiated(owner, "completed-once", "AddressBook");
    await putPart(owner, uploadId, 1, "0xa\n".repeat(2_000_000));
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        owner.client.gql<{ completeKvUpload: { addedCount: number } }>(
          `mutation { completeKvUpload(uploadId: "${uploadId}") { addedCount } }`,
        ),
      ),
    );
    expect(answers.filter((a) => a.data?.completeKvUpload.addedCount === 1)).toHaveLength(1);
    const refused = answers.filter((a) => a.errors);
    expect(refused.map((a) => [a.errors?.[0].extensions?.code, a.errors?.[0].message])).toEqual(
      Array.from({ length: 3 }, () => ["CONFLICT", "This upload is being completed already."]),
    );
  });
});
