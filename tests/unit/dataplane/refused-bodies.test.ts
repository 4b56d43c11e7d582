import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSecurityOptions } from "../../../server/dataplane/proxy/endpoint.ts";
import { call, type Harness, rpc, startHarness } from "./harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ withMeter: true });
});
afterAll(async () => {
  await h?.close();
});

describe("the body of a request refused before it was read", () => {
  it("is parsed for the logs only up to what a log keeps (16 KiB): a refused request costs no parse of megabytes", async () => {
    h.put({ exId: "refused-bodies", options: { ...defaultSecurityOptions(), tokens: true } });
    const small = await rpc(h.port, "/rpc/refused-bodies", call("eth_chainId"));
    const padded = [call("eth_chainId", ["x".repeat(20 * 1024)])];
    const large = await rpc(h.port, "/rpc/refused-bodies", padded);
    expect([small.status, large.status]).toEqual([401, 401]);
    const logged = async (count: number) => {
      for (let i = 0; i < 200 && h.meterEvents.length < count; i++) await new Promise((r) => setTimeout(r, 10));
      return h.meterEvents.filter((e) => e.endpoint.record.exId === "refused-bodies").map((e) => e.methods);
    };
    expect(await logged(2)).toEqual([["eth_chainId"], []]);
  });
});
