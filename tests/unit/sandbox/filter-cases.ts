/**
 * The sandbox's cases, the same for both of its hosts: the sandbox process (filter.test.ts) and the
 * stream engine's own thread (filter-in-thread.test.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createFilter, type Filter, type FilterOptions, testFilter } from "../../../server/dataplane/sandbox/filter.ts";
import type { FilterHelpers, FilterOutcome } from "../../../server/dataplane/sandbox/types.ts";

const batch = [
  { number: "0x1", transactions: [{ value: "0x10" }] },
  { number: "0x2", transactions: [] },
];
const metadata = { network: "local", dataset: "BLOCK", batch_start_range: 1, batch_end_range: 2 };

export const made: Filter[] = [];
export async function filter(source: string, options: Partial<Omit<FilterOptions, "source">> = {}): Promise<Filter> {
  const f = await createFilter({ source, owner: null, ...options });
  made.push(f);
  return f;
}
afterEach(() => {
  for (const f of made.splice(0)) f.dispose();
});

export function failed(outcome: FilterOutcome) {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

export function filterCases(host: string): void {
  describe(`filter sandbox (${host}): results`, () => {
    it("delivers the returned value as JSON with its size and duration", async () => {
      const f = await filter("function main(stream) { return stream.data.map((b) => b.number) }");
      const r = await f.run({ data: batch, metadata });
      expect(r).toMatchObject({ ok: true, skipped: false, resultJson: '["0x1","0x2"]', sizeBytes: 13 });
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
    });

    it("skips the batch when main returns null", async () => {
      const f = await filter("function main(stream) { return null }");
      expect(await f.run({ data: batch })).toMatchObject({ ok: true, skipped: true, resultJson: null, sizeBytes: 0 });
    });

    it("counts the size in UTF-8 bytes", async () => {
      const f = await filter("function main() { return 'é' }");
      expect(await f.run({ data: [] })).toMatchObject({ resultJson: '"é"', sizeBytes: 4 });
    });

    it("takes the batch's byte count from the caller only when the batch itself is the result", async () => {
      const text = JSON.stringify([{ name: "é" }]);
      const dataBytes = Buffer.byteLength(text);
      const through = await filter("function main(stream) { return stream.data }");
      expect(await through.run({ data: text, dataBytes })).toMatchObject({ resultJson: text, sizeBytes: dataBytes });
      const changed = await filter("function main(stream) { return stream.data.map((x) => x.name + 'é') }");
      expect(await changed.run({ data: text, dataBytes })).toMatchObject({ resultJson: '["éé"]', sizeBytes: 8 });
    });

    it("accepts the batch as JSON text and passes metadata through", async () => {
      const f = await filter("function main(stream) { return [stream.data.length, stream.metadata.network] }");
      expect(await f.run({ data: JSON.stringify(batch), metadata })).toMatchObject({ resultJson: '[2,"local"]' });
    });

    it("passes the batch through untouched without parsing it: the result is the text given", async () => {
      const text = JSON.stringify(batch);
      const f = await filter("function main(stream) { return stream.data }");
      expect(await f.run({ data: text, metadata })).toMatchObject({
        ok: true,
        resultJson: text,
        sizeBytes: text.length,
      });
      // Never parsed: text that is not even JSON goes through (the engine only passes JSON it made).
      expect(await f.run({ data: "[not json" })).toMatchObject({ ok: true, resultJson: "[not json" });
      const skip = await filter(
        "function main(stream) { return stream.metadata.dataset === 'LOGS' ? stream.data : null }",
      );
      expect(await skip.run({ data: "[not json", metadata })).toMatchObject({ ok: true, skipped: true });
      const v1 = await filter("function main(data) { return data }", { version: "V1" });
      expect(await v1.run({ data: text })).toMatchObject({ resultJson: text });
    });

    it("returns the stream object as data and metadata without re-stringifying the batch", async () => {
      const text = JSON.stringify(batch);
      const f = await filter("function main(stream) { return stream }");
      const r = await f.run({ data: text, metadata });
      expect(r).toMatchObject({ ok: true, resultJson: JSON.stringify({ data: batch, metadata }) });
      const changed = await filter(
        "function main(stream) { stream.metadata.seen = true; stream.extra = 1; return stream }",
      );
      expect(await changed.run({ data: text, metadata })).toMatchObject({
        resultJson: JSON.stringify({ data: batch, metadata: { ...metadata, seen: true }, extra: 1 }),
      });
    });

    it("the lazy batch behaves as an ordinary array, and a changed batch is delivered as changed", async () => {
      const f = await filter(`function main(stream) {
        const d = stream.data;
        const facts = [Array.isArray(d), d.length, Object.keys(d).join(","), JSON.stringify(d) === JSON.stringify(JSON.parse(JSON.stringify(d)))];
        d[0].tag = "x";
        d.push({ number: "0x3" });
        return [facts, d];
      }`);
      const r = await f.run({ data: JSON.stringify(batch) });
      expect(JSON.parse((r.ok && r.resultJson) || "null")).toEqual([
        [true, 2, "0,1", true],
        [{ ...batch[0], tag: "x" }, batch[1], { number: "0x3" }],
      ]);
      const mutated = await filter("function main(stream) { stream.data[1].number = '0x9'; return stream.data }");
      const m = await mutated.run({ data: JSON.stringify(batch) });
      expect(JSON.parse((m.ok && m.resultJson) || "null")[1].number).toBe("0x9");
      const sorted = await filter("function main(stream) { stream.data.reverse(); return stream.data }");
      const s = await sorted.run({ data: JSON.stringify(batch) });
      expect(s).toMatchObject({ resultJson: JSON.stringify([...batch].reverse()) });
    });

    it("a batch kept from an earlier call still holds that call's blocks", async () => {
      const f = await filter(
        "let prev = null; function main(stream) { const out = prev; prev = stream.data; return out === null ? null : out.map((b) => b.number) }",
      );
      await f.run({ data: JSON.stringify([{ number: "0x1" }]) });
      expect(await f.run({ data: JSON.stringify([{ number: "0x2" }]) })).toMatchObject({ resultJson: '["0x1"]' });
    });

    it("reads text outside ASCII in the batch exactly", async () => {
      const data = [{ memo: 'é ✓ 😀 \u2028 "q" \\ \u0000' }];
      const f = await filter("function main(stream) { return [stream.data[0].memo, stream.data[0].memo.length] }");
      expect(await f.run({ data })).toMatchObject({ resultJson: JSON.stringify([data[0].memo, data[0].memo.length]) });
    });

    it("an async main that passes the batch through delivers it", async () => {
      const f = await filter("async function main(stream) { await null; return stream.data }");
      expect(await f.run({ data: batch })).toMatchObject({ ok: true, resultJson: JSON.stringify(batch) });
      const later = await filter("async function main(stream) { await null; return stream.data.length }");
      expect(await later.run({ data: batch })).toMatchObject({ ok: true, resultJson: "2" });
    });

    it("a batch larger than the memory limit fails with MEMORY (its text is copied into the isolate), and the filter goes on", async () => {
      const big = JSON.stringify([{ pad: "x".repeat(24 * 1024 * 1024) }]);
      const limits = { memoryBytes: 16 * 1024 * 1024, timeoutMs: 5_000 };
      const reads = await filter("function main(stream) { return stream.data.length }", { limits });
      expect(failed(await reads.run({ data: big })).kind).toBe("MEMORY");
      expect(await reads.run({ data: batch })).toMatchObject({ ok: true, resultJson: "2" });
      const roomy = await filter("function main(stream) { return null }", {
        limits: { memoryBytes: 64 * 1024 * 1024 },
      });
      expect(await roomy.run({ data: big })).toMatchObject({ ok: true, skipped: true });
    });

    it("a toJSON the filter installs still shapes a returned batch", async () => {
      const f = await filter(
        "function main(stream) { Array.prototype.toJSON = function () { return 'arr' }; return stream.data }",
      );
      expect(await f.run({ data: JSON.stringify(batch) })).toMatchObject({ resultJson: '"arr"' });
    });

    it("captures console output as logs with levels", async () => {
      const f = await filter(`function main(stream) {
        console.log("blocks", stream.data.length, { a: 1 });
        console.info("info");
        console.warn("careful");
        console.error("bad");
        return null;
      }`);
      const r = await f.run({ data: batch });
      expect(r.logs).toEqual([
        { level: "INFO", message: 'blocks 2 {"a":1}' },
        { level: "INFO", message: "info" },
        { level: "WARNING", message: "careful" },
        { level: "ERROR", message: "bad" },
      ]);
    });

    it("caps the number of log lines per call", async () => {
      const f = await filter("function main() { for (let i = 0; i < 50; i++) console.log(i); return null }", {
        limits: { maxLogLines: 10 },
      });
      const r = await f.run({ data: [] });
      expect(r.logs).toHaveLength(11);
      expect(r.logs[10]).toEqual({
        level: "WARNING",
        message: "40 more log lines were dropped (limit 10 lines and 65536 characters per call)",
      });
    });

    it("bounds a call's log text: a long line is cut saying by how much, and lines past the call's characters are dropped", async () => {
      const f = await filter(
        "function main() { console.log('x'.repeat(5000)); for (let i = 0; i < 20; i++) console.log('y'.repeat(100)); return null }",
        { limits: { maxLogChars: 1_000, maxLogCharsPerCall: 1_550 } },
      );
      const r = await f.run({ data: [] });
      expect(r.logs[0].message).toBe(`${"x".repeat(1_000)}… [4000 more characters]`);
      expect(r.logs.slice(1, 6).map((l) => l.message)).toEqual([...Array(5)].map(() => "y".repeat(100)));
      // 1,500 characters kept: the seventh line has room for 50 of its 100.
      expect(r.logs[6].message).toBe(`${"y".repeat(50)}… [50 more characters]`);
      expect(r.logs[7]).toEqual({
        level: "WARNING",
        message: "14 more log lines were dropped (limit 200 lines and 1550 characters per call)",
      });
      expect(r.logs).toHaveLength(8);
      // The bound is per call: the next call starts afresh.
      expect((await f.run({ data: [] })).logs).toHaveLength(8);
    });

    it("reuses the context across calls of one filter and isolates different filters", async () => {
      const a = await filter("var calls = 0; function main() { calls++; globalThis.shared = 'a'; return calls }");
      const b = await filter("function main() { return typeof shared }");
      expect((await a.run({ data: [] })).ok && (await a.run({ data: [] }))).toMatchObject({ resultJson: "2" });
      expect(await b.run({ data: [] })).toMatchObject({ resultJson: '"undefined"' });
    });

    it("answers the one-shot test with the same outcome", async () => {
      expect(
        await testFilter({ source: "function main(s) { return s.data[0] }", owner: null }, { data: [7] }),
      ).toMatchObject({
        ok: true,
        resultJson: "7",
      });
    });
  });

  describe(`filter sandbox (${host}): versions`, () => {
    it("V1 calls main(data) with the batch array", async () => {
      const f = await filter("function main(data) { return Array.isArray(data) ? data.length : 'no' }", {
        version: "V1",
      });
      expect(await f.run({ data: batch, metadata })).toMatchObject({ resultJson: "2" });
    });

    it("V2 calls main(data, metadata)", async () => {
      const f = await filter("function main(data, metadata) { return [data.length, metadata.dataset] }", {
        version: "V2",
      });
      expect(await f.run({ data: batch, metadata })).toMatchObject({ resultJson: '[2,"BLOCK"]' });
    });

    it("V3 passes a stream object but refuses async main and has no qnLib", async () => {
      const f = await filter("function main(stream) { return [stream.data.length, typeof qnLib] }", { version: "V3" });
      expect(await f.run({ data: batch })).toMatchObject({ resultJson: '[2,"undefined"]' });
      const g = await filter("async function main(stream) { return 1 }", { version: "V3" });
      expect(failed(await g.run({ data: [] }))).toEqual({
        kind: "RUNTIME",
        message: "async main needs filter version V4 or later",
      });
    });

    it("V4 treats undefined as a skip, V5 reports it", async () => {
      const v4 = await filter("function main() {}", { version: "V4" });
      expect(await v4.run({ data: [] })).toMatchObject({ ok: true, skipped: true });
      const v5 = await filter("function main() {}", { version: "V5" });
      expect(failed(await v5.run({ data: [] })).kind).toBe("RESULT_NOT_SERIALIZABLE");
    });
  });

  describe(`filter sandbox (${host}): async main and key-value helpers`, () => {
    it("awaits async main", async () => {
      const f = await filter("async function main(stream) { await null; return { n: stream.data.length } }");
      expect(await f.run({ data: batch })).toMatchObject({ resultJson: '{"n":2}' });
    });

    it("reads lists through the FilterHelpers seam", async () => {
      const lists: Record<string, string[]> = { watched: ["0xaa", "0xbb"] };
      const helpers = {
        qnGetList: async (key: string) => lists[key] ?? [],
        qnContainsListItems: async (key: string, items: string[]) => items.map((i) => (lists[key] ?? []).includes(i)),
      } as Partial<FilterHelpers> as FilterHelpers;
      const f = await filter(
        `async function main(stream) {
          const hits = await qnLib.qnContainsListItems("watched", stream.data);
          const all = await qnLib.qnGetList("watched");
          console.log("checked", hits.length);
          return { hits, all };
        }`,
        { helpers },
      );
      const r = await f.run({ data: ["0xaa", "0xcc"] });
      expect(r).toMatchObject({ ok: true, resultJson: '{"hits":[true,false],"all":["0xaa","0xbb"]}' });
      expect(r.logs).toEqual([{ level: "INFO", message: "checked 2" }]);
    });

    it("rejects helper calls with a clear error when no key-value store is connected", async () => {
      const f = await filter("async function main() { return await qnLib.qnGetList('watched') }");
      expect(failed(await f.run({ data: [] })).message).toBe(
        "Error: key-value store not connected: qnLib helpers are unavailable",
      );
    });

    it("lets the filter catch a helper failure", async () => {
      const f = await filter(
        "async function main() { try { await qnLib.qnGetSet('k') } catch (e) { return e.message } }",
      );
      expect(await f.run({ data: [] })).toMatchObject({
        resultJson: '"key-value store not connected: qnLib helpers are unavailable"',
      });
    });

    it("checks helper argument types before calling the store", async () => {
      let called = false;
      const helpers = {
        qnContainsListItems: async () => {
          called = true;
          return [];
        },
      } as Partial<FilterHelpers> as FilterHelpers;
      const f = await filter("async function main() { return await qnLib.qnContainsListItems('k', [1, 2]) }", {
        helpers,
      });
      expect(failed(await f.run({ data: [] })).message).toBe(
        "Error: qnLib.qnContainsListItems: argument 2 must be an array of strings",
      );
      expect(called).toBe(false);
    });

    it("checks the fields of a helper's options before calling the store, naming the wrong one", async () => {
      let writes = 0;
      const write = async () => {
        writes++;
        return true;
      };
      const helpers = { qnUpsertList: write, qnBulkSets: write } as Partial<FilterHelpers> as FilterHelpers;
      const f = await filter(
        `async function main() {
          const calls = [
            () => qnLib.qnUpsertList("k", { add_items: "abc" }),
            () => qnLib.qnUpsertList("k", { remove_items: [1] }),
            () => qnLib.qnBulkSets({ add_sets: { a: 1 } }),
            () => qnLib.qnBulkSets({ delete_sets: { a: "b" } }),
          ];
          const out = [];
          for (const call of calls) out.push(await call().then(() => "written", (e) => e.message));
          out.push(await qnLib.qnUpsertList("k", { add_items: ["a"], remove_items: null }));
          return out;
        }`,
        { helpers },
      );
      const r = await f.run({ data: [] });
      expect(r.ok && JSON.parse(r.resultJson ?? "null")).toEqual([
        "qnLib.qnUpsertList: add_items must be an array of strings",
        "qnLib.qnUpsertList: remove_items must be an array of strings",
        "qnLib.qnBulkSets: add_sets must be an object whose values are strings",
        "qnLib.qnBulkSets: delete_sets must be an array of strings",
        true,
      ]);
      expect(writes).toBe(1);
    });

    it("times out while a helper call hangs", async () => {
      const helpers = { qnGetList: () => new Promise<string[]>(() => {}) } as Partial<FilterHelpers> as FilterHelpers;
      const f = await filter("async function main() { return await qnLib.qnGetList('k') }", {
        helpers,
        limits: { timeoutMs: 100 },
      });
      expect(failed(await f.run({ data: [] })).kind).toBe("TIMEOUT");
    });

    it("keeps the lines logged before a timeout, in a loop or waiting for a helper, in both sandbox processes", async () => {
      const helpers = { qnGetList: () => new Promise<string[]>(() => {}) } as Partial<FilterHelpers> as FilterHelpers;
      for (const timeoutMs of [100, 1_500]) {
        const loop = await filter("function main() { console.log('started'); console.warn('looping'); for (;;); }", {
          limits: { timeoutMs },
        });
        const looped = await loop.run({ data: [] });
        expect(failed(looped).kind).toBe("TIMEOUT");
        expect(looped.logs).toEqual([
          { level: "INFO", message: "started" },
          { level: "WARNING", message: "looping" },
        ]);
        const wait = await filter(
          "async function main() { console.log('asking'); return await qnLib.qnGetList('k') }",
          {
            helpers,
            limits: { timeoutMs },
          },
        );
        const waited = await wait.run({ data: [] });
        expect(failed(waited).kind).toBe("TIMEOUT");
        expect(waited.logs).toEqual([{ level: "INFO", message: "asking" }]);
      }
    });

    it("refuses more helper calls waiting at once than the limit", async () => {
      const helpers = { qnGetSet: async () => "v" } as Partial<FilterHelpers> as FilterHelpers;
      const f = await filter(
        `async function main() {
          const all = [];
          for (let i = 0; i < 300; i++) all.push(qnLib.qnGetSet("k").then(() => "ok", (e) => e.message));
          const out = await Promise.all(all);
          return [out.filter((x) => x === "ok").length, out.find((x) => x !== "ok")];
        }`,
        { helpers },
      );
      expect(await f.run({ data: [] })).toMatchObject({
        ok: true,
        resultJson: JSON.stringify([256, "more than 256 qnLib calls waiting at once: await them in smaller groups"]),
      });
    });

    it("refuses a helper call whose arguments are past 6 Mi characters of JSON, before the host reads them", async () => {
      let asked = 0;
      const helpers = {
        qnAddListItem: async () => {
          asked++;
          return true;
        },
      } as Partial<FilterHelpers> as FilterHelpers;
      const f = await filter(
        `async function main() {
          const fits = await qnLib.qnAddListItem("k", "x".repeat(6 * 1024 * 1024 - 10));
          const refused = await qnLib.qnAddListItem("k", "x".repeat(20e6)).then(() => "ok", (e) => e);
          return [fits, refused.message, refused.stack.includes("isolates") || refused.stack.includes("/server/")];
        }`,
        { helpers, limits: { memoryBytes: 256 * 1024 * 1024, timeoutMs: 10_000 } },
      );
      expect(await f.run({ data: [] })).toMatchObject({
        ok: true,
        resultJson: JSON.stringify([
          true,
          "qnLib.qnAddListItem: its arguments are 19.1 Mi characters of JSON; a call sends at most 6 Mi",
          // The refusal names none of the service's files.
          false,
        ]),
      });
      expect(asked).toBe(1);
    });

    it("settles main after helper calls awaited one after another, in the fast and the slow sandbox", async () => {
      const helpers = { qnGetSet: async () => "v" } as Partial<FilterHelpers> as FilterHelpers;
      const source =
        "async function main() { let n = 0; for (let i = 0; i < 5; i++) n += (await qnLib.qnGetSet('x')).length; return n }";
      for (const timeoutMs of [500, 5000]) {
        const f = await filter(source, { helpers, limits: { timeoutMs } });
        for (let i = 0; i < 20; i++)
          expect(await f.run({ data: [] }), `timeout ${timeoutMs}, run ${i}`).toMatchObject({
            ok: true,
            resultJson: "5",
          });
      }
    });

    it("code still running after main settled is the call's: it ends at the call's limit, which fails it", async () => {
      // A chain of promise reactions main left behind once it answered: it ran on, unbilled, until the
      // limit, and held the isolate (in the sandbox process, a thread of its pool) for the next call.
      const helpers = { qnGetSet: async () => "v" } as Partial<FilterHelpers> as FilterHelpers;
      const spin = "(function again() { Promise.resolve().then(again) })();";
      for (const source of [
        `async function main() { ${spin} return 1 }`,
        `async function main() { await qnLib.qnGetSet("k"); ${spin} return 2 }`,
      ]) {
        const f = await filter(source, { helpers, limits: { timeoutMs: 300 } });
        const started = performance.now();
        expect(failed(await f.run({ data: [] })), source).toEqual({
          kind: "TIMEOUT",
          message: "filter ran longer than its time limit of 300 ms",
        });
        expect(performance.now() - started).toBeGreaterThanOrEqual(250);
      }
    });

    it("reports a promise that can never settle", async () => {
      const f = await filter("async function main() { await new Promise(() => {}); return 1 }");
      expect(failed(await f.run({ data: [] })).message).toMatch(/never settled/);
    });
  });

  describe(`filter sandbox (${host}): errors and limits`, () => {
    it("reports a syntax error", async () => {
      const f = await filter("function main(stream) { return ( }");
      expect(failed(await f.run({ data: [] }))).toMatchObject({ kind: "SYNTAX", line: 1, column: 34 });
      expect(await f.check()).toMatchObject({ kind: "SYNTAX", line: 1, column: 34 });
    });

    it("reports a source without main", async () => {
      const f = await filter("const x = 1");
      expect(failed(await f.run({ data: [] }))).toEqual({
        kind: "SYNTAX",
        message: "the filter must define function main(stream)",
      });
    });

    it("reports a thrown error with its line and column and keeps logs written before it", async () => {
      const f = await filter("function main(stream) {\n  console.log('before');\n  throw new Error('boom');\n}");
      const r = await f.run({ data: [] });
      expect(failed(r)).toEqual({ kind: "RUNTIME", message: "Error: boom", line: 3, column: 9 });
      expect(r.logs).toEqual([{ level: "INFO", message: "before" }]);
    });

    it("recreates the context after a failure so state does not leak into the next call", async () => {
      const f = await filter(
        "var n = 0; function main(stream) { n++; if (stream.data[0] === 'fail') throw new Error('x'); return n }",
      );
      expect(await f.run({ data: ["ok"] })).toMatchObject({ resultJson: "1" });
      expect(await f.run({ data: ["ok"] })).toMatchObject({ resultJson: "2" });
      expect((await f.run({ data: ["fail"] })).ok).toBe(false);
      expect(await f.run({ data: ["ok"] })).toMatchObject({ resultJson: "1" });
    });

    it("calls made together run in order, sent back to back; those after a failure run in a fresh isolate", async () => {
      const f = await filter(
        "var n = 0; function main(stream) { n++; if (stream.data[0] === 'boom') throw new Error('boom at ' + n); return n }",
      );
      expect(await f.run({ data: ["warm"] })).toMatchObject({ ok: true, resultJson: "1" });
      const outcomes = await Promise.all(["a", "b", "boom", "c", "d", "async"].map((x) => f.run({ data: [x] })));
      expect(outcomes.map((o) => (o.ok ? o.resultJson : o.error.message))).toEqual([
        "2",
        "3",
        "Error: boom at 4",
        "1",
        "2",
        "3",
      ]);
      expect(outcomes.filter((o) => !o.ok).map((o) => failed(o).kind)).toEqual(["RUNTIME"]);
    });

    it("calls made together of an async main that awaits helpers do not interleave", async () => {
      const helpers = {
        qnGetList: async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return [];
        },
      } as Partial<FilterHelpers> as FilterHelpers;
      const f = await filter(
        "var n = 0; async function main(stream) { const mine = ++n; await qnLib.qnGetList('k'); return [mine, n] }",
        { helpers },
      );
      expect(await f.run({ data: [0] })).toMatchObject({ ok: true, resultJson: "[1,1]" });
      const outcomes = await Promise.all([1, 2, 3, 4].map((x) => f.run({ data: [x] })));
      expect(outcomes.map((o) => (o.ok ? o.resultJson : o.error.message))).toEqual([
        "[2,2]",
        "[3,3]",
        "[4,4]",
        "[5,5]",
      ]);
    });

    it("stops an infinite loop, even one that catches errors", async () => {
      for (const source of [
        "function main() { for (;;) {} }",
        "function main() { for (;;) { try { for (;;) {} } catch (e) {} } }",
      ]) {
        const f = await filter(source, { limits: { timeoutMs: 100 } });
        expect(failed(await f.run({ data: [] }))).toEqual({
          kind: "TIMEOUT",
          message: "filter ran longer than its time limit of 100 ms",
        });
      }
    });

    it("stops a memory bomb and keeps serving calls afterwards", async () => {
      const f = await filter(
        "function main(stream) { if (stream.data[0] === 'bomb') { const a = []; for (let i = 0; ; i++) a.push({ i, s: 'abc' + i }) } return 'fine' }",
        // A filter's limit: on the engine's thread when the engine runs filters there.
        { limits: { memoryBytes: 16 * 1024 * 1024, timeoutMs: 1_000 } },
      );
      expect(failed(await f.run({ data: ["bomb"] }))).toEqual({
        kind: "MEMORY",
        message: "filter exceeded its memory limit of 16 MiB",
      });
      expect(await f.run({ data: ["ok"] })).toMatchObject({ ok: true, resultJson: '"fine"' });
    });

    it("stops runaway recursion at the stack limit", async () => {
      const f = await filter("function f(n) { return f(n + 1) + 1 } function main() { return f(0) }");
      expect(failed(await f.run({ data: [] })).kind).toBe("MEMORY");
      const ok = await filter("function f(n) { return n === 0 ? 0 : f(n - 1) + 1 } function main() { return f(300) }");
      expect(await ok.run({ data: [] })).toMatchObject({ resultJson: "300" });
    });

    it("reports values that have no JSON form", async () => {
      for (const [source, message] of [
        ["function main() { return 1n }", "TypeError: Do not know how to serialize a BigInt"],
        ["function main() { const a = {}; a.a = a; return a }", expect.stringMatching(/circular/i)],
        ["function main() { return () => 1 }", "main returned a function, which has no JSON form"],
      ] as const) {
        const f = await filter(source);
        expect(failed(await f.run({ data: [] }))).toMatchObject({ kind: "RESULT_NOT_SERIALIZABLE", message });
      }
    });
  });

  describe(`filter sandbox (${host}): heap`, () => {
    it("reports the isolate's used heap with each outcome", async () => {
      const f = await filter(
        "var kept = []; function main() { kept.push(new Array(100000).fill(1)); return kept.length }",
      );
      const first = await f.run({ data: [] });
      const second = await f.run({ data: [] });
      expect(first.memoryBytes).toBeGreaterThan(0);
      expect(second.memoryBytes).toBeGreaterThan(first.memoryBytes + 500_000);
    });
  });

  describe(`filter sandbox (${host}): no host access`, () => {
    it.each([
      ["fetch", "function main() { return fetch('http://127.0.0.1/') }", "ReferenceError: fetch is not defined"],
      ["require", "function main() { return require('fs') }", "ReferenceError: require is not defined"],
      ["process", "function main() { return process.env }", "ReferenceError: process is not defined"],
      ["setTimeout", "function main() { setTimeout(() => 1, 1) }", "ReferenceError: setTimeout is not defined"],
      ["import", "async function main() { return await import('fs') }", expect.stringMatching(/Error/)],
    ])("%s is not reachable", async (_name, source, message) => {
      const f = await filter(source);
      expect(failed(await f.run({ data: [] }))).toMatchObject({ kind: "RUNTIME", message });
    });

    it("globalThis holds only language built-ins, console and qnLib", async () => {
      const f = await filter("function main() { return Object.getOwnPropertyNames(globalThis) }");
      const r = await f.run({ data: [] });
      const names = JSON.parse((r.ok && r.resultJson) || "[]") as string[];
      for (const forbidden of [
        "fetch",
        "require",
        "process",
        "module",
        "Buffer",
        "setTimeout",
        "setInterval",
        "queueMicrotask",
        "SharedArrayBuffer",
        "Atomics",
        "WebAssembly",
        "FinalizationRegistry",
        "WeakRef",
        "hostHelper",
        "hostFinish",
      ]) {
        expect(names).not.toContain(forbidden);
      }
      expect(names).toEqual(expect.arrayContaining(["console", "qnLib", "JSON", "main"]));
    });

    it("a filter that replaces JSON or console cannot break result delivery", async () => {
      const f = await filter(
        "function main() { JSON.stringify = () => 'hacked'; JSON.parse = () => 0; console.log = null; return { a: 1 } }",
      );
      expect(await f.run({ data: [] })).toMatchObject({ ok: true, resultJson: '{"a":1}' });
      expect(await f.run({ data: [1] })).toMatchObject({ ok: true, resultJson: '{"a":1}' });
    });

    it("a filter that replaces Array, String or Promise methods cannot pass the log bounds or write its answer", async () => {
      // join and slice made to answer a megabyte: the console joined and cut lines with them.
      const logs = await filter(
        "var big = 'y'.repeat(1e6); function main() { Array.prototype.join = () => big;" +
          " String.prototype.slice = function () { return String(this) }; String = () => big;" +
          " console.log('x', 1); console.log('z'.repeat(5000)); return null }",
        { version: "V4" },
      );
      const logged = await logs.run({ data: [] });
      expect(logged.logs.map((l) => l.message)).toEqual(["x 1", `${"z".repeat(4_096)}… [904 more characters]`]);
      // The answer was sent from a promise the code could reach (its then, its species): it wrote its own.
      const forged = 'fin("E" + JSON.stringify({ kind: "RUNTIME", message: "forged", stack: "" }))';
      for (const source of [
        `function main() { var then = Promise.prototype.then; Promise.prototype.then = function (f, r) {
           Promise.prototype.then = then; return { then: function (fin) { ${forged} } } }; return Promise.resolve(1) }`,
        `function main() { function Fake(exec) { exec(function () {}, function () {}); this.then = function (fin) { ${forged} } }
           Object.defineProperty(Promise, Symbol.species, { value: Fake }); return new Promise(function (r) { r(2) }) }`,
      ]) {
        const f = await filter(source, { version: "V4" });
        expect(await f.run({ data: [] })).toMatchObject({ ok: true, resultJson: expect.stringMatching(/^[12]$/) });
      }
    });

    it("cuts a thrown error's text, keeping its place", async () => {
      const f = await filter("function main() {\n  throw new Error('e'.repeat(100000));\n}");
      const error = failed(await f.run({ data: [] }));
      expect(error).toEqual({
        kind: "RUNTIME",
        message: `Error: ${"e".repeat(4_089)}… [95911 more characters]`,
        line: 2,
        column: 9,
      });
      const loading = await filter("throw 'x'.repeat(100000); function main() {}");
      expect(failed(await loading.run({ data: [] })).message).toMatch(/… \[\d+ more characters\]$/);
    });
  });

  describe(`filter sandbox (${host}): batches kept in the service until read`, () => {
    // Big enough to be kept (4 KiB and more) once a call did not read its batch.
    const big = (n: number) => JSON.stringify([{ number: n, extra: "x".repeat(5_000) }]);

    it("a filter that reads its batch only sometimes sees every batch it reads, and passes the others through", async () => {
      const f = await filter("function main(s) { return s.metadata.read ? s.data[0].number : s.data }");
      for (const [n, read] of [
        [1, false],
        [2, false],
        [3, true],
        [4, true],
        [5, false],
        [6, true],
      ] as const) {
        const r = await f.run({ data: big(n), metadata: { read } });
        expect(r).toMatchObject({ ok: true, resultJson: read ? String(n) : big(n) });
      }
    });

    it("a batch kept in a global reads in the next call; one kept two calls back no longer does, with a clear error", async () => {
      const f = await filter(
        "var kept = []; function main(s) { kept.push(s.data); const back = s.metadata.back; return back ? kept[kept.length - 1 - back][0].number : null }",
      );
      expect(await f.run({ data: big(1), metadata: {} })).toMatchObject({ ok: true, skipped: true });
      expect(await f.run({ data: big(2), metadata: {} })).toMatchObject({ ok: true, skipped: true });
      expect(await f.run({ data: big(3), metadata: { back: 1 } })).toMatchObject({ ok: true, resultJson: "2" });
      expect(await f.run({ data: big(4), metadata: {} })).toMatchObject({ ok: true, skipped: true });
      expect(await f.run({ data: big(5), metadata: {} })).toMatchObject({ ok: true, skipped: true });
      expect(await f.run({ data: big(6), metadata: {} })).toMatchObject({ ok: true, skipped: true });
      // Batch 4 came with its call (the one before had read a batch); batch 3 was kept and is gone now.
      expect(await f.run({ data: big(7), metadata: { back: 3 } })).toMatchObject({ ok: true, resultJson: "4" });
      expect(failed(await f.run({ data: big(8), metadata: { back: 5 } })).message).toMatch(/no longer available/);
    });
  });

  describe(`filter sandbox (${host}): sets kept in the isolate (itemsSnapshot)`, () => {
    function store() {
      const items: Record<string, string[]> = { watched: ["0xAA", "0xbb"], tags: ["a", "B"] };
      const versions: Record<string, number> = { watched: 1, tags: 1 };
      const asked: { key: string; known: number | null; sent: boolean }[] = [];
      const helpers = {
        itemsSnapshot: async (key: string, known: number | null) => {
          const version = versions[key] ?? 0;
          const sent = known !== version;
          asked.push({ key, known, sent });
          return { version, items: sent ? (items[key] ?? []) : null };
        },
        qnContainsAddressBookItems: async () => {
          throw new Error("asked the host per item");
        },
        qnContainsListItems: async () => {
          throw new Error("asked the host per item");
        },
      } as Partial<FilterHelpers> as FilterHelpers;
      return {
        helpers,
        asked,
        write(key: string, next: string[]) {
          items[key] = next;
          versions[key] = (versions[key] ?? 0) + 1;
        },
      };
    }
    const source = `async function main(stream) {
      const out = [];
      for (const tx of stream.data) out.push((await qnLib.qnContainsAddressBookItems("watched", [tx.from, tx.to])).join());
      out.push((await qnLib.qnContainsListItems("tags", ["a", "b", "B"])).join());
      return out;
    }`;
    const txs = [
      { from: "0xaa", to: "0xcc" },
      { from: "0xdd", to: "0xBB" },
    ];

    it("answers membership from a set in the isolate, asking the host once per key and call", async () => {
      const s = store();
      const f = await filter(source, { helpers: s.helpers });
      expect(await f.run({ data: txs })).toMatchObject({
        ok: true,
        resultJson: JSON.stringify(["true,false", "false,true", "true,false,true"]),
      });
      expect(s.asked).toEqual([
        { key: "watched", known: null, sent: true },
        { key: "tags", known: null, sent: true },
      ]);
      // The next call asks for the versions again, and gets no items while they are current.
      await f.run({ data: txs });
      expect(s.asked.slice(2)).toEqual([
        { key: "watched", known: 1, sent: false },
        { key: "tags", known: 1, sent: false },
      ]);
    });

    it("a change made after the filter started is seen on its next call", async () => {
      const s = store();
      const f = await filter(source, { helpers: s.helpers });
      await f.run({ data: txs });
      s.write("watched", ["0xcc"]);
      expect(await f.run({ data: txs })).toMatchObject({
        resultJson: JSON.stringify(["false,true", "false,false", "true,false,true"]),
      });
      expect(s.asked.slice(2, 3)).toEqual([{ key: "watched", known: 1, sent: true }]);
    });

    it("checks the arguments in the isolate", async () => {
      const s = store();
      const f = await filter("async function main() { return await qnLib.qnContainsListItems('tags', [1]) }", {
        helpers: s.helpers,
      });
      expect(failed(await f.run({ data: [] })).message).toBe(
        "Error: qnLib.qnContainsListItems: argument 2 must be an array of strings",
      );
      expect(s.asked).toEqual([]);
    });
  });
}
