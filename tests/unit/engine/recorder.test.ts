import { describe, expect, it, vi } from "vitest";
import { AckRecorder } from "../../../server/dataplane/engine/recorder.ts";
import type { Acknowledgement } from "../../../server/dataplane/engine/store.ts";

const batch = (start: number, end: number): Acknowledgement => ({
  streamId: "s",
  owner: "o",
  startBlock: start,
  endBlock: end,
  hashes: Array.from({ length: end - start + 1 }, (_, i) => ({ number: start + i, hash: `0x${start + i}` })),
});

/** A database whose statements commit (or fail) when the test says. */
function heldWrites() {
  const writes: { ack: Acknowledgement; commit: () => void; fail: (e: Error) => void }[] = [];
  const write = (ack: Acknowledgement) =>
    new Promise<void>((commit, fail) => writes.push({ ack: structuredClone(ack), commit, fail }));
  return { writes, write };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("AckRecorder", () => {
  it("writes a batch at once when nothing is in flight, and those acknowledged meanwhile in one statement", async () => {
    const db = heldWrites();
    const recorder = new AckRecorder(db.write);
    recorder.add(batch(1, 10));
    expect(db.writes.map((w) => [w.ack.startBlock, w.ack.endBlock])).toEqual([[1, 10]]);
    recorder.add(batch(11, 20));
    recorder.add(batch(21, 30));
    expect(db.writes).toHaveLength(1);
    const settled = recorder.settled();
    db.writes[0].commit();
    await turn();
    expect(db.writes.map((w) => [w.ack.startBlock, w.ack.endBlock])).toEqual([
      [1, 10],
      [11, 30],
    ]);
    expect(db.writes[1].ack.hashes.map((h) => h.number)).toEqual(Array.from({ length: 20 }, (_, i) => 11 + i));
    db.writes[1].commit();
    await settled;
  });

  it("makes the loop wait when the limit of unrecorded batches is reached, and not before", async () => {
    const db = heldWrites();
    const recorder = new AckRecorder(db.write);
    recorder.add(batch(1, 1));
    recorder.add(batch(2, 2));
    let passed = false;
    const below = recorder.below(3).then(() => {
      passed = true;
    });
    await turn();
    expect(passed).toBe(true);
    await below;
    recorder.add(batch(3, 3));
    passed = false;
    const waiting = recorder.below(3).then(() => {
      passed = true;
    });
    await turn();
    expect(passed).toBe(false);
    db.writes[0].commit();
    await waiting;
    expect(passed).toBe(true);
    // The two batches acknowledged meanwhile go out together once the first committed (and the
    // interval between two writes has run).
    await vi.waitFor(() => expect(db.writes).toHaveLength(2));
    expect(db.writes.map((w) => [w.ack.startBlock, w.ack.endBlock])).toEqual([
      [1, 1],
      [2, 3],
    ]);
  });

  it("throws a failed statement's error at the next use and writes nothing after it", async () => {
    const db = heldWrites();
    const recorder = new AckRecorder(db.write);
    recorder.add(batch(1, 1));
    recorder.add(batch(2, 2));
    const settled = recorder.settled();
    db.writes[0].fail(new Error("lease lost"));
    await expect(settled).rejects.toThrow("lease lost");
    expect(() => recorder.add(batch(3, 3))).toThrow("lease lost");
    expect(db.writes).toHaveLength(1);
  });
});
