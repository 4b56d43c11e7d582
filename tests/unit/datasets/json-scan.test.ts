import { describe, expect, it } from "vitest";
import { JsonScanError, scanBatchAnswer } from "../../../server/dataplane/datasets/json-scan.ts";

/** A deterministic generator of JSON values with the awkward parts: escapes, brackets in strings, nesting. */
function randomValue(next: () => number, depth = 0): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 5 : 7));
  const strings = ["0x1f", 'a "quoted" } ] { [', "back\\slash\\", "tab\tnewline\n", "é ✓ \u0000", ""];
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() > 0.5;
    case 2:
      return Math.round((next() - 0.5) * 1e6) / 100;
    case 3:
    case 4:
      return strings[Math.floor(next() * strings.length)];
    case 5:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 4) }, (_, i) => [`k${i}"}`, randomValue(next, depth + 1)]),
      );
  }
}

function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

describe("scanning a JSON-RPC batch answer", () => {
  it("cuts each response's id and the exact text of its result or error", () => {
    const text = `[ {"jsonrpc":"2.0","id":1,"result":{"hash":"0xab","txs":[{"input":"a\\"}]"}],"n":null}} ,
      {"id":"2","jsonrpc":"2.0","error":{"code":-32601,"message":"method not found"}},
      {"jsonrpc":"2.0","id":3,"result":null}, {"id":4,"result":-1.5e3}, {"id":5,"result":"x\\\\"}]`;
    expect(scanBatchAnswer(text)).toEqual([
      { id: "1", result: '{"hash":"0xab","txs":[{"input":"a\\"}]"}],"n":null}' },
      { id: '"2"', error: '{"code":-32601,"message":"method not found"}' },
      { id: "3", result: "null" },
      { id: "4", result: "-1.5e3" },
      { id: "5", result: '"x\\\\"' },
    ]);
    expect(scanBatchAnswer(" [ ] ")).toEqual([]);
  });

  it("gives back every result as the text JSON.stringify wrote, for many random values", () => {
    const next = seeded(7);
    for (let round = 0; round < 200; round++) {
      const results = Array.from({ length: 1 + Math.floor(next() * 5) }, () => randomValue(next));
      const answer = JSON.stringify(results.map((result, id) => ({ jsonrpc: "2.0", id, result })));
      const scanned = scanBatchAnswer(answer);
      expect(scanned.map((r) => r.id)).toEqual(results.map((_, id) => String(id)));
      expect(scanned.map((r) => r.result)).toEqual(results.map((r) => JSON.stringify(r)));
    }
  });

  it("refuses what is not a batch answer, saying where", () => {
    for (const bad of [
      '{"id":1,"result":2}',
      '[{"id":1,"result":"open}]',
      '[{"id":1,"result":{"a":[1,2}]',
      '[{"id":1,"result":2}] trailing',
      '[{"id":1 "result":2}]',
      "[1]",
      '[{"id":1,"result":}]',
    ]) {
      expect(() => scanBatchAnswer(bad), bad).toThrow(JsonScanError);
    }
    expect(() => scanBatchAnswer('[{"id":1,"result":"open}]')).toThrow(/unterminated string at character 18/);
  });
});
