import { describe, expect, it } from "vitest";
import {
  type DeliveryAttempt,
  DeliveryHistory,
  type DeliveryRecord,
  PREVIEW_CHARS,
  ROWS_PER_FLUSH,
  StreamDeliveryLog,
} from "../../../server/dataplane/engine/deliveries.ts";

const stream = { id: "s1", accountId: "a1" };
const attempt = (block: number, extra: Partial<DeliveryAttempt> = {}): DeliveryAttempt => ({
  startBlock: block,
  endBlock: block,
  attempt: 1,
  outcome: "DELIVERED",
  httpStatus: 200,
  answer: "HTTP 200",
  latencyMs: 2,
  bytes: 10,
  payload: `[${block}]`,
  isReorg: false,
  ...extra,
});

describe("stream delivery log", () => {
  it("keeps each attempt of a slow stream as its own row, with its payload's first characters", () => {
    const log = new StreamDeliveryLog(stream);
    log.add(attempt(1, { payload: "x".repeat(PREVIEW_CHARS + 50) }));
    log.add(attempt(2, { outcome: "FAILED", httpStatus: 503, answer: "webhook answered HTTP 503" }));
    const rows = log.take();
    expect(rows.map((r) => [r.startBlock, r.outcome, r.httpStatus, r.batches])).toEqual([
      [1, "DELIVERED", 200, 1],
      [2, "FAILED", 503, 1],
    ]);
    expect(rows[0].preview).toHaveLength(PREVIEW_CHARS);
    expect(log.take()).toEqual([]);
  });

  it("folds the attempts past the bound into one row per outcome, counting them", () => {
    const log = new StreamDeliveryLog(stream);
    const total = ROWS_PER_FLUSH + 30;
    for (let block = 1; block <= total; block++)
      log.add(attempt(block, block % 2 ? {} : { outcome: "SKIPPED", payload: null, bytes: 0, latencyMs: 4 }));
    const rows = log.take();
    expect(rows).toHaveLength(ROWS_PER_FLUSH + 2);
    const folded = rows.slice(ROWS_PER_FLUSH);
    expect(folded.map((r) => [r.outcome, r.startBlock, r.endBlock, r.batches])).toEqual([
      ["DELIVERED", ROWS_PER_FLUSH + 1, total - 1, 15],
      ["SKIPPED", ROWS_PER_FLUSH + 2, total, 15],
    ]);
    expect(folded[0].bytes).toBe(150);
    expect(folded[0].latencyMs).toBe(2);
    expect(folded[0].preview).toBe(`[${total - 1}]`);
    expect(folded[1].preview).toBeNull();
  });
});

describe("delivery history", () => {
  it("writes every open log's rows, and a released log's, in one call per flush", async () => {
    const written: DeliveryRecord[][] = [];
    let prunes = 0;
    const history = new DeliveryHistory(
      {
        recordDeliveries: async (rows) => {
          written.push(rows);
        },
        pruneDeliveries: async () => {
          prunes += 1;
        },
      },
      (e) => {
        throw e;
      },
      0,
    );
    const a = history.open(stream);
    const b = history.open({ id: "s2", accountId: "a1" });
    a.add(attempt(1));
    b.add(attempt(7));
    history.release(b);
    await history.flush();
    expect(written.map((rows) => rows.map((r) => `${r.streamId}:${r.startBlock}`))).toEqual([["s2:7", "s1:1"]]);
    await history.flush();
    expect(written).toHaveLength(1);
    expect(prunes).toBe(1);
  });
});
