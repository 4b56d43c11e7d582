import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_UPLOAD_BYTES } from "../../../server/domains/kv/limits.ts";
import { localPartStorage } from "../../../server/domains/kv/part-storage.ts";
import type { UploadRow } from "../../../server/domains/kv/store.ts";

// Parts kept under the data directory: an upload's size is refused as its parts arrive, the check costs
// the same whatever number of parts came before, and a missing part is named on read.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function storageWithUpload() {
  const dataDir = mkdtempSync(join(tmpdir(), "nodeplane-parts-"));
  dirs.push(dataDir);
  const storage = localPartStorage({ dataDir });
  const uploadId = crypto.randomUUID();
  await storage.begin("account", uploadId);
  return { dataDir, storage, uploadId, upload: { id: uploadId } as UploadRow };
}

describe("local part storage", () => {
  it("refuses the part that would take the upload past 64 MiB, counting a part sent again once, also after a restart", async () => {
    const { dataDir, storage, uploadId } = await storageWithUpload();
    const quarter = Buffer.alloc(MAX_UPLOAD_BYTES / 4, 0x61);
    for (let n = 1; n <= 4; n++) await storage.writePart(uploadId, n, quarter);
    await storage.writePart(uploadId, 4, quarter);
    await expect(storage.writePart(uploadId, 5, Buffer.from("b"))).rejects.toMatchObject({ code: "BAD_USER_INPUT" });
    await storage.writePart(uploadId, 4, Buffer.alloc(MAX_UPLOAD_BYTES / 4 - 1));
    await storage.writePart(uploadId, 5, Buffer.from("b"));
    // A service started again on the data directory counts the parts already there.
    const again = localPartStorage({ dataDir });
    await expect(again.writePart(uploadId, 6, Buffer.from("c"))).rejects.toMatchObject({ code: "BAD_USER_INPUT" });
  });

  it("takes 3,000 parts in the time of a few: a part's check does not read the parts before it", async () => {
    const { storage, uploadId, upload } = await storageWithUpload();
    const started = performance.now();
    for (let n = 1; n <= 3000; n++) await storage.writePart(uploadId, n, Buffer.from(`i${n}\n`));
    expect(performance.now() - started).toBeLessThan(10_000);
    expect((await storage.read(upload)).toString().split("\n")).toHaveLength(3001);
  }, 120_000);

  it("names the first missing part on read", async () => {
    const { storage, uploadId, upload } = await storageWithUpload();
    await storage.writePart(uploadId, 1, Buffer.from("a\n"));
    await storage.writePart(uploadId, 3, Buffer.from("c\n"));
    await expect(storage.read(upload)).rejects.toThrow("Part 2 of this upload was not received");
  });
});
