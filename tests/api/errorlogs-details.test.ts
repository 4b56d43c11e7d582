/**
 * Error logs carry what the proxy saw of each failed call: method, HTTP method, status, code, the request id
 * the client got as x-request-id, the URL with its token masked, and the request and response bodies.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { defaultSecurityOptions, hashToken } from "../../server/dataplane/proxy/endpoint.ts";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";
import { call, type ProxyHarness, startProxyHarness } from "../unit/metering/proxy-harness.ts";

const ctx = useTestApp();
let proxy: ProxyHarness;
let deadProxy: ProxyHarness;
beforeAll(async () => {
  proxy = await startProxyHarness(ctx.app.database.url);
  deadProxy = await startProxyHarness(ctx.app.database.url, { upstreamUrl: "http://127.0.0.1:9" });
});
afterAll(async () => {
  await deadProxy?.close();
  await proxy?.close();
});

const TOKEN = "secret0123456789abcdef0123456789abcdef";
const WRONG_TOKEN = "wrong0123456789abcdef0123456789abcdef0";
const JWT = "eyJhbGciOiJSUzI1NiJ9.e30.c2VjcmV0LWp3dC1zaWduYXR1cmU";
const BAD_ADDRESS = "0xnot-an-address";

async function endpointOf(client: GqlClient) {
  const data = await client.gqlOk<{ createEndpoint: { id: string; exId: string; network: string } }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id exId network } }`,
  );
  return data.createEndpoint;
}

/** POSTs and returns the status, the x-request-id header and the body text. */
async function post(base: string, path: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return { status: response.status, requestId: response.headers.get("x-request-id"), text: await response.text() };
}

interface Details {
  log: {
    method: string;
    httpMethod: string;
    status: number;
    errorCode: number | null;
    errorKind: string;
    url: string;
    network: string;
    requestId: string;
  };
  request: string | null;
  response: string | null;
}

async function details(client: GqlClient, exId: string, requestId: string): Promise<Details> {
  const data = await client.gqlOk<{ errorLogDetails: Details }>(
    `query($e: String!, $r: String!) { errorLogDetails(endpointExId: $e, requestId: $r) {
      log { method httpMethod status errorCode errorKind url network requestId } request response } }`,
    { e: exId, r: requestId },
  );
  return data.errorLogDetails;
}

describe("error log details", () => {
  it("each failure kind is logged with its method, HTTP method, status, code, request id, masked URL and bodies", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    const account = user.viewer.id;
    const tokenOn = { options: { ...defaultSecurityOptions(), tokens: true }, tokenHashes: [hashToken(TOKEN)] };
    proxy.put(endpoint, account, tokenOn);
    deadProxy.put(endpoint, account, tokenOn);
    const ipEndpoint = await endpointOf(user.client);
    proxy.put(ipEndpoint, account, { options: { ...defaultSecurityOptions(), ips: true }, ips: ["10.0.0.0/8"] });

    // Refused before the body is read: a wrong path token, and a missing one with a JWT header beside it.
    const chainId = JSON.stringify(call("eth_chainId", [], 7));
    const wrongToken = await post(proxy.url, `/rpc/${endpoint.exId}/${WRONG_TOKEN}?key=${TOKEN}`, chainId, {
      authorization: `Bearer ${JWT}`,
    });
    expect(wrongToken.status).toBe(401);
    const noToken = await post(proxy.url, `/rpc/${endpoint.exId}`, JSON.stringify([call("eth_blockNumber")]), {
      "x-token": WRONG_TOKEN,
    });
    expect(noToken.status).toBe(401);
    // Refused by the IP rule; the client's own plain request id is used.
    const ipRefused = await post(proxy.url, `/rpc/${ipEndpoint.exId}`, chainId, { "x-request-id": "client-id.42" });
    expect(ipRefused).toMatchObject({ status: 403, requestId: "client-id.42" });
    // A request id that is not plain is replaced.
    const odd = await post(proxy.url, `/rpc/${ipEndpoint.exId}`, chainId, { "x-request-id": "has space<>" });
    expect(odd.requestId).toMatch(/^[0-9a-f]+-[0-9a-z]+$/);
    // Not JSON, with the token in the x-token header (it passes; the body does not).
    const notJson = await post(proxy.url, `/rpc/${endpoint.exId}`, "{not json", { "x-token": TOKEN });
    expect(notJson.status).toBe(400);
    // Rate limited.
    await user.client.gqlOk(
      `mutation($e: ID!) { createRateLimiter(endpointId: $e, interval: MINUTE, rate: 1, methods: ["eth_gasPrice"], reason: "r", limitByIP: false) { id } }`,
      { e: endpoint.id },
    );
    await proxy.stages.rateLimit.reloadAll();
    const gasPrice = JSON.stringify(call("eth_gasPrice"));
    expect((await post(proxy.url, `/rpc/${endpoint.exId}/${TOKEN}`, gasPrice)).status).toBe(200);
    const limited = await post(proxy.url, `/rpc/${endpoint.exId}/${TOKEN}`, gasPrice);
    expect(limited.status).toBe(429);
    // The upstream does not answer.
    const upstreamDown = await post(deadProxy.url, `/rpc/${endpoint.exId}/${TOKEN}`, chainId);
    expect(upstreamDown.status).toBe(502);
    // The node answers a JSON-RPC error in a 200 answer: alone, and as the second call of a batch.
    const badBalance = JSON.stringify(call("eth_getBalance", [BAD_ADDRESS, "latest"], 3));
    const nodeError = await post(proxy.url, `/rpc/${endpoint.exId}/${TOKEN}`, badBalance);
    expect(nodeError.status).toBe(200);
    expect(JSON.parse(nodeError.text)).toHaveProperty("error");
    const batchBody = JSON.stringify([call("eth_chainId", [], 1), call("eth_getBalance", [BAD_ADDRESS, "latest"], 2)]);
    const batchError = await post(proxy.url, `/rpc/${endpoint.exId}/${TOKEN}`, batchBody);
    expect(batchError.status).toBe(200);
    // A successful call is not logged.
    const ok = await post(proxy.url, `/rpc/${endpoint.exId}/${TOKEN}`, chainId);
    expect(ok.status).toBe(200);
    await Promise.all([proxy.stages.meter.flush(), deadProxy.stages.meter.flush()]);

    const every = [wrongToken, noToken, ipRefused, notJson, limited, upstreamDown, nodeError, batchError, ok];
    for (const r of every) expect(r.requestId).toBeTruthy();
    expect(new Set(every.map((r) => r.requestId)).size).toBe(every.length);

    const masked = `/rpc/${endpoint.exId}/****`;
    const d1 = await details(user.client, endpoint.exId, wrongToken.requestId as string);
    expect(d1.log).toMatchObject({
      method: "eth_chainId",
      httpMethod: "POST",
      status: 401,
      errorCode: -32001,
      errorKind: "TOKEN_REQUIRED",
      url: masked,
      network: "ethereum-sepolia",
      requestId: wrongToken.requestId,
    });
    expect(d1.request).toBe(chainId);
    expect(d1.response).toBe(wrongToken.text);

    const d2 = await details(user.client, endpoint.exId, noToken.requestId as string);
    expect(d2.log).toMatchObject({ method: "eth_blockNumber", status: 401, url: `/rpc/${endpoint.exId}` });
    expect(d2.request).toContain("eth_blockNumber");

    const d3 = await details(user.client, ipEndpoint.exId, "client-id.42");
    expect(d3.log).toMatchObject({ method: "eth_chainId", httpMethod: "POST", status: 403, errorCode: -32003 });
    expect(d3.response).toBe(ipRefused.text);

    const d4 = await details(user.client, endpoint.exId, notJson.requestId as string);
    expect(d4.log).toMatchObject({ method: "(none)", status: 400, errorCode: -32700, url: `/rpc/${endpoint.exId}` });
    expect(d4.request).toBe("{not json");
    expect(d4.response).toBe(notJson.text);

    const d5 = await details(user.client, endpoint.exId, limited.requestId as string);
    expect(d5.log).toMatchObject({ method: "eth_gasPrice", status: 429, errorCode: -32029, url: masked });
    expect(d5.request).toBe(gasPrice);
    expect(d5.response).toBe(limited.text);

    const d6 = await details(user.client, endpoint.exId, upstreamDown.requestId as string);
    expect(d6.log).toMatchObject({ method: "eth_chainId", status: 502, errorCode: -32091, url: masked });
    expect(d6.response).toBe(upstreamDown.text);

    const nodeCode = (JSON.parse(nodeError.text) as { error: { code: number } }).error.code;
    const d7 = await details(user.client, endpoint.exId, nodeError.requestId as string);
    expect(d7.log).toMatchObject({
      method: "eth_getBalance",
      httpMethod: "POST",
      status: 200,
      errorCode: nodeCode,
      errorKind: "JSON_RPC_ERROR",
      url: masked,
    });
    expect(d7.request).toBe(badBalance);
    expect(d7.response).toBe(nodeError.text);

    // A batch's failed call is stored under <x-request-id>.<index>.
    const d8 = await details(user.client, endpoint.exId, `${batchError.requestId}.1`);
    expect(d8.log).toMatchObject({ method: "eth_getBalance", status: 200, errorKind: "JSON_RPC_ERROR" });
    expect(d8.request).toBe(batchBody);
    expect(d8.response).toBe(batchError.text);
    expect(
      (
        await user.client.gql(
          `query($e: String!, $r: String!) { errorLogDetails(endpointExId: $e, requestId: $r) { request } }`,
          {
            e: endpoint.exId,
            r: ok.requestId,
          },
        )
      ).errors?.[0].extensions?.code,
    ).toBe("NOT_FOUND");

    // No token, right or wrong, and no JWT is stored anywhere in a log.
    const rows = await proxy.db.execute(
      sql`select * from error_logs where endpoint_id in (${endpoint.id}, ${ipEndpoint.id})`,
    );
    expect(rows.rows).toHaveLength(9);
    const stored = JSON.stringify(rows.rows);
    for (const secret of [TOKEN, WRONG_TOKEN, JWT]) expect(stored).not.toContain(secret);
  });

  it("WebSocket: a node's JSON-RPC error is logged with the message and its reply", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);
    const from = new Date(Date.now() - 60_000).toISOString();
    const ws = new WebSocket(`${proxy.url.replace("http", "ws")}/rpc/${endpoint.exId}`);
    const message = JSON.stringify(call("eth_getBalance", [BAD_ADDRESS, "latest"], "ws-1"));
    const reply = await new Promise<string>((resolve, reject) => {
      ws.on("open", () => ws.send(message));
      ws.once("message", (data) => resolve(data.toString()));
      ws.on("error", reject);
    });
    ws.close();
    expect(JSON.parse(reply)).toHaveProperty("error");
    await proxy.stages.meter.flush();
    const data = await user.client.gqlOk<{ errorLogs: { logs: { requestId: string; httpMethod: string }[] } }>(
      `query($e: String!, $from: DateTime!, $to: DateTime!) { errorLogs(endpointExId: $e, from: $from, to: $to, limit: 10) { logs { requestId httpMethod } } }`,
      { e: endpoint.exId, from, to: new Date(Date.now() + 60_000).toISOString() },
    );
    expect(data.errorLogs.logs).toHaveLength(1);
    const d = await details(user.client, endpoint.exId, data.errorLogs.logs[0].requestId);
    expect(d.log).toMatchObject({
      method: "eth_getBalance",
      httpMethod: "WS",
      errorKind: "JSON_RPC_ERROR",
      url: `/rpc/${endpoint.exId}`,
    });
    expect(d.request).toBe(message);
    expect(d.response).toBe(reply);
  });
});
