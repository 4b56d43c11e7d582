import { describe, expect, it } from "vitest";
import { admitCalls, refusalHeaders, refusedCallsAnswer } from "../../../server/dataplane/proxy/admission.ts";
import { compileEndpoint, defaultSecurityOptions } from "../../../server/dataplane/proxy/endpoint.ts";
import { refusal } from "../../../server/dataplane/proxy/jsonrpc.ts";
import { NONE_REFUSED, RequestRecord } from "../../../server/dataplane/proxy/request-record.ts";
import type { RateLimitStage } from "../../../server/dataplane/proxy/stages.ts";

const endpoint = compileEndpoint({
  id: "e1",
  exId: "ex1",
  accountId: "a1",
  network: "ethereum-sepolia",
  chainId: 11155111,
  status: "ACTIVE",
  options: defaultSecurityOptions(),
  ipCustomHeaderName: null,
  tokenHashes: [],
  jwts: [],
  referrers: [],
  ips: [],
  domainMasks: [],
  requestFilterMethods: [],
  disabledMethods: ["eth_gasPrice"],
});
const request = () => new RequestRecord({ endpoint, transport: "http", clientIp: "127.0.0.1", startedAt: 0 });
const call = (method: string, id: number) => ({ jsonrpc: "2.0", id, method });
const limited = { ...refusal("METHOD_DISABLED"), kind: "RATE_LIMITED", http: 429, retryAfterMs: 1500 };

describe("admission: the sequence HTTP requests and WebSocket messages share", () => {
  it("lets everything through synchronously when no check or limit refuses, and records the calls", () => {
    const r = request();
    const admitted = admitCalls(endpoint, r, [call("eth_chainId", 1)], { admit: () => undefined });
    expect(admitted).not.toBeInstanceOf(Promise);
    expect(admitted).toEqual({ whole: null, perCall: [undefined], refused: NONE_REFUSED });
    expect(r.methods).toEqual(["eth_chainId"]);
  });

  it("merges the calls' own refusals with the stage's, the call's own first", async () => {
    const seen: string[][] = [];
    const stage: RateLimitStage = {
      admit: async (info) => {
        seen.push(info.methods);
        return { perCall: [limited, undefined, limited] };
      },
    };
    const calls = [call("eth_gasPrice", 1), call("eth_chainId", 2), { id: 3 }];
    const admitted = await admitCalls(endpoint, request(), calls, stage);
    expect(seen).toEqual([["eth_gasPrice", "eth_chainId", ""]]);
    expect(admitted.whole).toBeNull();
    expect(admitted.refused.map((r) => [r.index, r.refusal.kind])).toEqual([
      [0, "METHOD_DISABLED"],
      [2, "INVALID_REQUEST"],
    ]);
  });

  it("a whole refusal from the stage refuses the request", () => {
    const admitted = admitCalls(endpoint, request(), [call("eth_chainId", 1)], { admit: () => ({ refuse: limited }) });
    expect(admitted).toMatchObject({ whole: limited });
  });

  it("answers refused calls one error each, and a 429 says when to retry in whole seconds", () => {
    const calls = [call("eth_chainId", 1), call("eth_chainId", 2)];
    expect(JSON.parse(refusedCallsAnswer(calls, true, () => limited)).map((a: { id: number }) => a.id)).toEqual([1, 2]);
    expect(JSON.parse(refusedCallsAnswer(calls, false, () => limited)).id).toBe(1);
    expect(refusalHeaders(limited)).toEqual({ "retry-after": "2" });
    expect(refusalHeaders({ ...limited, retryAfterMs: 0 })).toEqual({ "retry-after": "1" });
    expect(refusalHeaders(refusal("TOKEN_REQUIRED"))).toBeNull();
  });
});
