import { describe, expect, it } from "vitest";
import type { DatasetBatchJson } from "../../../server/dataplane/datasets/reader.ts";
import type { BatchSettings } from "../../../server/dataplane/engine/planning.ts";
import {
  type AheadBatch,
  extendReadAhead,
  FILTER_RUNS_AHEAD,
  type Filtered,
  sliceBatch,
  startFilterRunsAhead,
  takeAhead,
} from "../../../server/dataplane/engine/read-ahead.ts";

const settings = (over: Partial<BatchSettings> = {}): BatchSettings => ({
  batchSize: 2,
  elastic: false,
  keepDistanceFromTip: 0,
  endRange: null,
  ...over,
});

/** The blocks from–to as a read returns them: one item per block, its number. */
const blocks = (from: number, to: number): DatasetBatchJson => ({
  dataset: "BLOCK",
  fromBlock: from,
  toBlock: to,
  itemsJson: Array.from({ length: to - from + 1 }, (_, i) => String(from + i)),
});

const aheadOf = (...ranges: [number, number][]): AheadBatch[] =>
  ranges.map(([from, to]) => ({ from, to, read: Promise.resolve(blocks(from, to)) }));

describe("sliceBatch", () => {
  it("answers the span itself when it is just those blocks", () => {
    const whole = blocks(10, 13);
    expect(sliceBatch(whole, 10, 13)).toBe(whole);
  });

  it("cuts a batch out of a span", () => {
    expect(sliceBatch(blocks(10, 15), 12, 13)).toEqual(blocks(12, 13));
    expect(sliceBatch(blocks(10, 15), 14, 15)).toEqual(blocks(14, 15));
  });
});

describe("takeAhead", () => {
  it("takes the batch read ahead as planned off the front", () => {
    const ahead = aheadOf([10, 11], [12, 13]);
    const first = ahead[0];
    expect(takeAhead(ahead, { from: 10, to: 11 })).toBe(first);
    expect(ahead.map((b) => b.from)).toEqual([12]);
  });

  it.each([
    { name: "another first block (after a reorg)", planned: { from: 8, to: 9 } },
    { name: "another last block (the batch size changed)", planned: { from: 10, to: 12 } },
  ])("empties the read-ahead planned for another batch: $name", ({ planned }) => {
    const ahead = aheadOf([10, 11], [12, 13]);
    expect(takeAhead(ahead, planned)).toBeNull();
    expect(ahead).toEqual([]);
  });

  it("answers null with nothing read ahead", () => {
    expect(takeAhead([], { from: 0, to: 1 })).toBeNull();
  });
});

describe("extendReadAhead", () => {
  const reader = () => {
    const reads: [number, number][] = [];
    const read = (from: number, to: number) => {
      reads.push([from, to]);
      return Promise.resolve(blocks(from, to));
    };
    return { reads, read };
  };

  it("reads the next span in one request and cuts it into batches", async () => {
    const { reads, read } = reader();
    const ahead: AheadBatch[] = [];
    extendReadAhead(ahead, settings(), { after: 9, last: 100, reorgUntil: -1, span: 3 }, read);
    // Up to span + 1 batches are kept: a second span is read once no more than one span's batches are left.
    expect(reads).toEqual([
      [10, 15],
      [16, 21],
    ]);
    expect(ahead.map((b) => [b.from, b.to])).toEqual([
      [10, 11],
      [12, 13],
      [14, 15],
      [16, 17],
      [18, 19],
      [20, 21],
    ]);
    expect(await ahead[4].read).toEqual(blocks(18, 19));
  });

  it("continues after the last batch read ahead, and reads nothing while more than a span is left", () => {
    const { reads, read } = reader();
    const ahead = aheadOf([10, 11], [12, 13]);
    extendReadAhead(ahead, settings(), { after: 9, last: 100, reorgUntil: -1, span: 2 }, read);
    expect(reads).toEqual([[14, 17]]);
    extendReadAhead(ahead, settings(), { after: 9, last: 100, reorgUntil: -1, span: 2 }, read);
    expect(reads).toEqual([[14, 17]]);
  });

  it.each([
    { name: "the chain tip", at: { after: 9, last: 12, reorgUntil: -1, span: 4 }, reads: [[10, 11]] },
    {
      name: "a reorged range (read on its own in its turn)",
      at: { after: 9, last: 100, reorgUntil: 10, span: 4 },
      reads: [],
    },
  ])("stops at $name", ({ at, reads: expected }) => {
    const { reads, read } = reader();
    extendReadAhead([], settings(), at, read);
    expect(reads).toEqual(expected);
  });

  it("a failed span read fails each of its batches, and nothing is left unhandled", async () => {
    const ahead: AheadBatch[] = [];
    extendReadAhead(ahead, settings(), { after: 9, last: 13, reorgUntil: -1, span: 2 }, () =>
      Promise.reject(new Error("node down")),
    );
    expect(ahead).toHaveLength(2);
    await expect(ahead[1].read).rejects.toThrow("node down");
  });
});

describe("startFilterRunsAhead", () => {
  const runner = () => {
    const runs: number[] = [];
    const run = (batch: DatasetBatchJson): Filtered => {
      runs.push(batch.fromBlock);
      return { dataJson: "[]", dataBytes: 2, metadata: {}, firstRun: null };
    };
    return { runs, run };
  };

  it("starts the runs after the first batch's preparation, in block order", async () => {
    const { runs, run } = runner();
    const ahead = aheadOf([10, 11], [12, 13], [14, 15]);
    let prepareFirst = () => {};
    const first = new Promise<void>((resolve) => {
      prepareFirst = resolve;
    });
    startFilterRunsAhead(ahead, first, run);
    await Promise.resolve();
    expect(runs).toEqual([]);
    prepareFirst();
    await ahead[2].filtered;
    expect(runs).toEqual([12, 14]);
    expect(ahead[0].filtered).toBeUndefined();
  });

  it("starts them even when the first batch's preparation failed", async () => {
    const { runs, run } = runner();
    const ahead = aheadOf([10, 11], [12, 13]);
    startFilterRunsAhead(ahead, Promise.reject(new Error("read failed")), run);
    await ahead[1].filtered;
    expect(runs).toEqual([12]);
  });

  it(`starts at most ${FILTER_RUNS_AHEAD - 1} runs beyond the first batch`, async () => {
    const { runs, run } = runner();
    const ranges = Array.from({ length: FILTER_RUNS_AHEAD + 4 }, (_, i): [number, number] => [i, i]);
    const ahead = aheadOf(...ranges);
    startFilterRunsAhead(ahead, Promise.resolve(), run);
    await Promise.all(ahead.map((b) => b.filtered));
    expect(runs).toEqual(ranges.slice(1, FILTER_RUNS_AHEAD).map(([from]) => from));
  });

  it("stops at a gap and at a batch already prepared, and keeps a run already started", async () => {
    const { runs, run } = runner();
    const gap = aheadOf([10, 11], [12, 13], [20, 21]);
    startFilterRunsAhead(gap, Promise.resolve(), run);
    await gap[1].filtered;
    expect(gap[2].filtered).toBeUndefined();

    const prepared = aheadOf([10, 11], [12, 13]);
    prepared[1].prepared = new Promise(() => {});
    startFilterRunsAhead(prepared, Promise.resolve(), run);
    expect(prepared[1].filtered).toBeUndefined();

    const started = aheadOf([10, 11], [12, 13]);
    const kept = Promise.resolve<Filtered>({ dataJson: "[1]", dataBytes: 3, metadata: {}, firstRun: null });
    started[1].filtered = kept;
    startFilterRunsAhead(started, Promise.resolve(), run);
    expect(started[1].filtered).toBe(kept);
    expect(runs).toEqual([12]);
  });
});
