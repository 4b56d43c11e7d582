import { describe, expect, it } from "vitest";
import { compileEndpoint, defaultSecurityOptions } from "../../../server/dataplane/proxy/endpoint.ts";
import { refusal } from "../../../server/dataplane/proxy/jsonrpc.ts";
import { NONE_REFUSED, RequestRecord } from "../../../server/dataplane/proxy/request-record.ts";
import type { MeterEvent } from "../../../server/dataplane/proxy/stages.ts";

const endpoint = compileEndpoint({
  id: "endpoint-1",
  exId: "ex",
  accountId: "account-1",
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
  disabledMethods: [],
});

const arrived = () =>
  new RequestRecord({
    endpoint,
    transport: "http",
    clientIp: "10.0.0.1",
    startedAt: 1000,
    requestId: "req-1",
    httpMethod: "POST",
    url: "/rpc/ex",
    origin: "https://app.example.com",
  });

const body = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
const call = { jsonrpc: "2.0", id: 1, method: "eth_chainId" };
const tooMany = refusal("METHOD_NOT_ALLOWED");

/** The meter's view of a record: every MeterEvent field, so a field left behind by a stage shows. */
const eventOf = (r: RequestRecord): Required<MeterEvent> => ({
  endpoint: r.endpoint,
  transport: r.transport,
  clientIp: r.clientIp,
  methods: r.methods,
  startedAt: r.startedAt,
  durationMs: r.durationMs,
  httpStatus: r.httpStatus,
  responseBytes: r.responseBytes,
  refused: r.refused,
  requestRefusal: r.requestRefusal,
  httpMethod: r.httpMethod as string,
  url: r.url as string,
  calls: r.calls as unknown[],
  requestBody: r.requestBody,
  responseBody: r.responseBody,
  requestId: r.requestId as string,
  origin: r.origin as string,
  untimed: r.untimed,
  pushed: r.pushed,
});

const origin = {
  endpoint,
  transport: "http",
  clientIp: "10.0.0.1",
  startedAt: 1000,
  requestId: "req-1",
  httpMethod: "POST",
  url: "/rpc/ex",
  origin: "https://app.example.com",
  untimed: false,
  pushed: false,
};

describe("RequestRecord", () => {
  it.each([
    {
      name: "as it arrives: who sent it, nothing asked or answered yet",
      build: () => arrived(),
      event: {
        ...origin,
        methods: [],
        calls: undefined,
        requestBody: null,
        refused: NONE_REFUSED,
        requestRefusal: null,
        httpStatus: 0,
        responseBytes: null,
        responseBody: null,
        durationMs: 0,
      },
    },
    {
      name: "answered by the node",
      build: () => {
        const r = arrived();
        r.requestBody = body;
        return r
          .parsed([call], ["eth_chainId"])
          .answered(200, 36, '{"jsonrpc":"2.0","id":1,"result":"0x1"}')
          .end(1002.5);
      },
      event: {
        ...origin,
        methods: ["eth_chainId"],
        calls: [call],
        requestBody: body,
        refused: NONE_REFUSED,
        requestRefusal: null,
        httpStatus: 200,
        responseBytes: 36,
        responseBody: '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
        durationMs: 2.5,
      },
    },
    {
      name: "refused whole over HTTP: the refusal's status, no bytes forwarded",
      build: () => arrived().parsed([call], ["eth_chainId"]).refusedWhole(tooMany, "{refused}").end(1001),
      event: {
        ...origin,
        methods: ["eth_chainId"],
        calls: [call],
        requestBody: null,
        refused: NONE_REFUSED,
        requestRefusal: tooMany,
        httpStatus: tooMany.http,
        responseBytes: null,
        responseBody: "{refused}",
        durationMs: 1,
      },
    },
    {
      name: "refused whole on a WebSocket: the bytes it sent",
      build: () => arrived().refusedWhole(tooMany, "{refused}", 9),
      event: {
        ...origin,
        methods: [],
        calls: undefined,
        requestBody: null,
        refused: NONE_REFUSED,
        requestRefusal: tooMany,
        httpStatus: tooMany.http,
        responseBytes: 9,
        responseBody: "{refused}",
        durationMs: 0,
      },
    },
    {
      name: "some calls refused, the rest answered",
      build: () => {
        const r = arrived().parsed([call, call], ["eth_chainId", "eth_chainId"]);
        r.refused = [{ index: 1, refusal: tooMany }];
        return r.answered(200, 10, "[…]");
      },
      event: {
        ...origin,
        methods: ["eth_chainId", "eth_chainId"],
        calls: [call, call],
        requestBody: null,
        refused: [{ index: 1, refusal: tooMany }],
        requestRefusal: null,
        httpStatus: 200,
        responseBytes: 10,
        responseBody: "[…]",
        durationMs: 0,
      },
    },
  ])("$name", ({ build, event }) => {
    expect(eventOf(build())).toEqual(event);
  });

  it("is what the rate-limit stage sees and the meter records: the same object, filled in stage by stage", () => {
    const r = arrived();
    const seenByStage: { methods: string[] } = r;
    r.parsed([call], ["eth_chainId"]);
    expect(seenByStage.methods).toEqual(["eth_chainId"]);
    const recorded: MeterEvent = r.answered(200, 1, "x").end(1003);
    expect(recorded).toBe(r);
    expect(recorded.durationMs).toBe(3);
  });
});
