import { describe, expect, it } from "vitest";
import {
  type BatchSettings,
  batchesPerSpan,
  continuesDelivered,
  lastDeliverable,
  needsNewerTip,
  planBatch,
  planSpan,
  READ_SPAN_BYTES,
  READ_SPAN_MAX_BLOCKS,
  settingsOf,
} from "../../../server/dataplane/engine/planning.ts";

const settings = (over: Partial<BatchSettings> = {}): BatchSettings => ({
  batchSize: 10,
  elastic: false,
  keepDistanceFromTip: 0,
  endRange: null,
  ...over,
});

describe("lastDeliverable", () => {
  it.each([
    { name: "the tip itself", s: settings(), tip: 100, last: 100 },
    { name: "held back from the tip", s: settings({ keepDistanceFromTip: 5 }), tip: 100, last: 95 },
    { name: "the end range before the tip", s: settings({ endRange: 50 }), tip: 100, last: 50 },
    {
      name: "the tip before the end range",
      s: settings({ endRange: 500, keepDistanceFromTip: 3 }),
      tip: 100,
      last: 97,
    },
    { name: "no tip seen yet", s: settings(), tip: -1, last: -1 },
  ])("$name", ({ s, tip, last }) => {
    expect(lastDeliverable(s, tip)).toBe(last);
  });
});

describe("needsNewerTip", () => {
  it.each([
    { name: "no tip seen yet", s: settings(), next: 0, tip: -1, wanted: true },
    { name: "a whole batch below the tip", s: settings(), next: 0, tip: 9, wanted: false },
    { name: "one block short of a whole batch", s: settings(), next: 0, tip: 8, wanted: true },
    {
      name: "a whole batch only without the distance kept",
      s: settings({ keepDistanceFromTip: 2 }),
      next: 0,
      tip: 10,
      wanted: true,
    },
    { name: "a batch size of 0 counts as 1", s: settings({ batchSize: 0 }), next: 5, tip: 5, wanted: false },
    { name: "the end range cuts the batch", s: settings({ endRange: 4 }), next: 0, tip: 100, wanted: true },
    { name: "complete: past the end range", s: settings({ endRange: 4 }), next: 5, tip: -1, wanted: false },
  ])("$name", ({ s, next, tip, wanted }) => {
    expect(needsNewerTip(s, next, tip)).toBe(wanted);
  });
});

describe("planBatch", () => {
  it.each([
    {
      name: "a whole batch",
      s: settings(),
      c: { next: 0, tip: 100, reorgUntil: -1 },
      plan: { kind: "batch", from: 0, to: 9, isReorg: false },
    },
    {
      name: "complete past the end range",
      s: settings({ endRange: 20 }),
      c: { next: 21, tip: 100, reorgUntil: -1 },
      plan: { kind: "complete" },
    },
    {
      name: "the end block itself is still delivered",
      s: settings({ endRange: 20 }),
      c: { next: 20, tip: 100, reorgUntil: -1 },
      plan: { kind: "batch", from: 20, to: 20, isReorg: false },
    },
    { name: "waits at the tip", s: settings(), c: { next: 101, tip: 100, reorgUntil: -1 }, plan: { kind: "wait" } },
    {
      name: "waits for the distance kept from the tip",
      s: settings({ batchSize: 1, keepDistanceFromTip: 3 }),
      c: { next: 98, tip: 100, reorgUntil: -1 },
      plan: { kind: "wait" },
    },
    {
      name: "a fixed batch waits for a whole batch",
      s: settings(),
      c: { next: 95, tip: 100, reorgUntil: -1 },
      plan: { kind: "wait" },
    },
    {
      name: "an elastic batch shrinks to the tip",
      s: settings({ elastic: true }),
      c: { next: 95, tip: 100, reorgUntil: -1 },
      plan: { kind: "batch", from: 95, to: 100, isReorg: false },
    },
    {
      name: "an elastic batch shrinks to the tip less the distance",
      s: settings({ elastic: true, keepDistanceFromTip: 2 }),
      c: { next: 95, tip: 100, reorgUntil: -1 },
      plan: { kind: "batch", from: 95, to: 98, isReorg: false },
    },
    {
      name: "a fixed batch shrinks to the end range",
      s: settings({ endRange: 14 }),
      c: { next: 10, tip: 100, reorgUntil: -1 },
      plan: { kind: "batch", from: 10, to: 14, isReorg: false },
    },
    {
      name: "a fixed batch waits when the tip is before the end range",
      s: settings({ endRange: 14 }),
      c: { next: 10, tip: 12, reorgUntil: -1 },
      plan: { kind: "wait" },
    },
    {
      name: "a re-delivered batch stops at the reorged range's end",
      s: settings(),
      c: { next: 5, tip: 100, reorgUntil: 7 },
      plan: { kind: "batch", from: 5, to: 7, isReorg: true },
    },
    {
      name: "the reorged range's last block is reorged",
      s: settings(),
      c: { next: 7, tip: 100, reorgUntil: 7 },
      plan: { kind: "batch", from: 7, to: 7, isReorg: true },
    },
    {
      name: "after the reorged range, batches are whole again",
      s: settings(),
      c: { next: 8, tip: 100, reorgUntil: 7 },
      plan: { kind: "batch", from: 8, to: 17, isReorg: false },
    },
    {
      name: "a batch size of 0 counts as 1",
      s: settings({ batchSize: 0 }),
      c: { next: 3, tip: 100, reorgUntil: -1 },
      plan: { kind: "batch", from: 3, to: 3, isReorg: false },
    },
    {
      name: "nothing before a tip is seen",
      s: settings({ elastic: true }),
      c: { next: 0, tip: -1, reorgUntil: -1 },
      plan: { kind: "wait" },
    },
  ])("$name", ({ s, c, plan }) => {
    expect(planBatch(s, c)).toEqual(plan);
  });
});

describe("batchesPerSpan", () => {
  it.each([
    { name: "nothing known yet: one batch", size: 10, bytesPerBlock: Number.POSITIVE_INFINITY, batches: 1 },
    { name: "empty blocks: the block cap", size: 10, bytesPerBlock: 0, batches: READ_SPAN_MAX_BLOCKS / 10 },
    { name: "by bytes", size: 1, bytesPerBlock: READ_SPAN_BYTES / 40, batches: 40 },
    { name: "a batch larger than a span: still one", size: 1000, bytesPerBlock: 1, batches: 1 },
    { name: "whole batches only", size: 7, bytesPerBlock: READ_SPAN_BYTES / 20, batches: 2 },
  ])("$name", ({ size, bytesPerBlock, batches }) => {
    expect(batchesPerSpan(size, bytesPerBlock)).toBe(batches);
  });
});

describe("planSpan", () => {
  it.each([
    {
      name: "whole batches up to the count",
      s: settings({ batchSize: 5 }),
      span: { from: 10, last: 100, reorgUntil: -1, count: 3 },
      batches: [
        { from: 10, to: 14 },
        { from: 15, to: 19 },
        { from: 20, to: 24 },
      ],
    },
    {
      name: "a fixed batch short of the last block is left for later",
      s: settings({ batchSize: 5 }),
      span: { from: 10, last: 22, reorgUntil: -1, count: 5 },
      batches: [
        { from: 10, to: 14 },
        { from: 15, to: 19 },
      ],
    },
    {
      name: "an elastic span ends with a short batch",
      s: settings({ batchSize: 5, elastic: true }),
      span: { from: 10, last: 22, reorgUntil: -1, count: 5 },
      batches: [
        { from: 10, to: 14 },
        { from: 15, to: 19 },
        { from: 20, to: 22 },
      ],
    },
    {
      name: "a fixed span ends with a short batch at the end range",
      s: settings({ batchSize: 5, endRange: 22 }),
      span: { from: 10, last: 22, reorgUntil: -1, count: 5 },
      batches: [
        { from: 10, to: 14 },
        { from: 15, to: 19 },
        { from: 20, to: 22 },
      ],
    },
    {
      name: "nothing past the last block",
      s: settings(),
      span: { from: 101, last: 100, reorgUntil: -1, count: 3 },
      batches: [],
    },
    { name: "nothing reorged", s: settings(), span: { from: 5, last: 100, reorgUntil: 5, count: 3 }, batches: [] },
    { name: "a count of zero", s: settings(), span: { from: 0, last: 100, reorgUntil: -1, count: 0 }, batches: [] },
  ])("$name", ({ s, span, batches }) => {
    expect(planSpan(s, span)).toEqual(batches);
  });

  it("plans the same batches planBatch makes one by one at the same tip", () => {
    for (const s of [
      settings({ batchSize: 3 }),
      settings({ batchSize: 4, elastic: true }),
      settings({ batchSize: 4, endRange: 30 }),
    ]) {
      const tip = 33;
      const spans = planSpan(s, { from: 0, last: lastDeliverable(s, tip), reorgUntil: -1, count: 100 });
      const oneByOne = [];
      for (let next = 0; ; ) {
        const plan = planBatch(s, { next, tip, reorgUntil: -1 });
        if (plan.kind !== "batch") break;
        oneByOne.push({ from: plan.from, to: plan.to });
        next = plan.to + 1;
      }
      expect(spans).toEqual(oneByOne);
    }
  });
});

describe("settingsOf", () => {
  it("takes a stream row's batch settings", () => {
    expect(
      settingsOf({ datasetBatchSize: 25, elasticBatchEnabled: true, keepDistanceFromTip: 3, endRange: 900 }),
    ).toEqual({ batchSize: 25, elastic: true, keepDistanceFromTip: 3, endRange: 900 });
  });
});

describe("continuesDelivered", () => {
  const last = { number: 99, hash: "0xaa" };
  it.each([
    {
      name: "the next block's parent is the last delivered",
      lastDelivered: last,
      next: 100,
      parent: "0xaa",
      continues: true,
    },
    {
      name: "another parent (a reorg, or a stale one)",
      lastDelivered: last,
      next: 100,
      parent: "0xbb",
      continues: false,
    },
    { name: "not the block after it (moved back)", lastDelivered: last, next: 95, parent: "0xaa", continues: false },
    { name: "nothing delivered by this runner yet", lastDelivered: null, next: 100, parent: "0xaa", continues: false },
  ])("$name", ({ lastDelivered, next, parent, continues }) => {
    expect(continuesDelivered(lastDelivered, next, parent)).toBe(continues);
  });
});
