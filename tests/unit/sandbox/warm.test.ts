import { describe, expect, it } from "vitest";
import { runWarm } from "../../../server/dataplane/sandbox/warm.ts";

const counter = "var calls = 0; function main(params) { calls++; return { calls, v: params.data.v } }";
const run = (accountId: string, functionId: string, source: string, v = 1) =>
  runWarm({ accountId, functionId }, { source, version: "V4" }, { data: JSON.stringify({ v }) });

describe("warm function isolates", () => {
  it("reuse one isolate per account, function and version", async () => {
    expect(await run("acct-a", "fn-1", counter)).toMatchObject({ ok: true, resultJson: '{"calls":1,"v":1}' });
    expect(await run("acct-a", "fn-1", counter, 2)).toMatchObject({ resultJson: '{"calls":2,"v":2}' });
    // Another function, another account, or a new version of the code: its own isolate.
    expect(await run("acct-a", "fn-2", counter)).toMatchObject({ resultJson: '{"calls":1,"v":1}' });
    expect(await run("acct-b", "fn-1", counter)).toMatchObject({ resultJson: '{"calls":1,"v":1}' });
    const v2 = `${counter}\n// v2`;
    expect(await run("acct-a", "fn-1", v2)).toMatchObject({ resultJson: '{"calls":1,"v":1}' });
    expect(await run("acct-a", "fn-1", counter)).toMatchObject({ resultJson: '{"calls":3,"v":1}' });
  });

  it("start a failed function's next call from a fresh isolate", async () => {
    const source =
      "var calls = 0; function main(params) { calls++; if (params.data.v === 0) throw new Error('no'); return calls }";
    expect(await run("acct-a", "fn-3", source)).toMatchObject({ resultJson: "1" });
    expect(await run("acct-a", "fn-3", source, 0)).toMatchObject({ ok: false, error: { message: "Error: no" } });
    expect(await run("acct-a", "fn-3", source)).toMatchObject({ resultJson: "1" });
  });
});
