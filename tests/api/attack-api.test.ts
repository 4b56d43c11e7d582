import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/api.ts";

// The API, the RPC proxy and their HTTP routes against a hostile client: what an attack found open.
// (What was already refused is tested beside its feature; functions and the key-value store in
// attack-functions-kv.test.ts.)

const ctx = useTestApp();

describe("an RPC path with malformed percent-encoding", () => {
  it("is answered as naming no endpoint, over node:http and the fast lane, and the service goes on", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    const answers = [
      await fetch(`${ctx.app.url}/rpc/%ZZ`),
      await fetch(`${ctx.app.url}/rpc/%E0%A4%A`, { method: "POST", body: call }),
      await fetch(`${ctx.app.url}/rpc/abc/%ZZ`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: call,
      }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeLessThan(500);
      expect(((await answer.json()) as { error?: { message: string } }).error?.message).toBeTruthy();
    }
    expect((await fetch(`${ctx.app.url}/healthz`)).status).toBe(200);
  });
});
