import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BODY_LIMIT } from "../../server/dataplane/metering/meter.ts";
import { DEFAULT_MAX_BATCH_CALLS } from "../../server/dataplane/proxy/plane.ts";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";
import { call, type ProxyHarness, startProxyHarness } from "../unit/metering/proxy-harness.ts";

const ctx = useTestApp();
let proxy: ProxyHarness;
beforeAll(async () => {
  proxy = await startProxyHarness(ctx.app.database.url);
});
afterAll(async () => {
  await proxy?.close();
});

async function endpointOf(client: GqlClient) {
  const data = await client.gqlOk<{ createEndpoint: { id: string; exId: string; network: string } }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id exId network } }`,
  );
  return data.createEndpoint;
}

const batchOf = (n: number, firstId = 1) => Array.from({ length: n }, (_, i) => call("eth_chainId", [], firstId + i));

describe("batch limits", () => {
  it("answers a batch over the limit as Geth does, forwarding nothing, and logs it once", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);

    const over = await proxy.rpc(endpoint.exId, batchOf(DEFAULT_MAX_BATCH_CALLS + 1, 7));
    expect(over.status).toBe(200);
    expect(over.body).toEqual([
      {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32600, message: "batch too large", data: { limit: DEFAULT_MAX_BATCH_CALLS } },
      },
    ]);
    // The id of the first call that has one; none: null.
    const anonymous = batchOf(DEFAULT_MAX_BATCH_CALLS + 1).map(({ id: _id, ...rest }) => rest);
    expect(((await proxy.rpc(endpoint.exId, anonymous)).body as { id: unknown }[])[0].id).toBeNull();
    // At the limit, every call is answered.
    const at = await proxy.rpc(endpoint.exId, batchOf(DEFAULT_MAX_BATCH_CALLS));
    expect(at.status).toBe(200);
    expect(at.body).toHaveLength(DEFAULT_MAX_BATCH_CALLS);
    expect((at.body as { result?: string }[]).every((a) => a.result === "0xaa36a7")).toBe(true);

    await proxy.stages.meter.flush();
    const rows = await proxy.db.execute<{ error_kind: string; calls: number; failed_calls: number; n: number }>(
      sql`select error_kind, calls, failed_calls from error_logs where endpoint_id = ${endpoint.id}`,
    );
    expect(rows.rows).toEqual([
      { error_kind: "BATCH_TOO_LARGE", calls: DEFAULT_MAX_BATCH_CALLS + 1, failed_calls: DEFAULT_MAX_BATCH_CALLS + 1 },
      { error_kind: "BATCH_TOO_LARGE", calls: DEFAULT_MAX_BATCH_CALLS + 1, failed_calls: DEFAULT_MAX_BATCH_CALLS + 1 },
    ]);
  });

  it("keeps a limited batch's refused calls as one error log with counts, bodies capped", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);
    await user.client.gqlOk(
      `mutation($e: ID!) { createRateLimiter(endpointId: $e, interval: MINUTE, rate: 1, methods: ["eth_chainId"], reason: "r", limitByIP: false) { id } }`,
      { e: endpoint.id },
    );
    await proxy.stages.rateLimit.reloadAll();
    const from = new Date(Date.now() - 60_000).toISOString();

    // A batch at the limit with a long id in every call: bodies far over what a log keeps.
    const batch = Array.from({ length: DEFAULT_MAX_BATCH_CALLS }, (_, i) =>
      call("eth_chainId", [], `${"x".repeat(60)}-${i}`),
    );
    const answer = await proxy.rpc(endpoint.exId, batch);
    expect(answer.status).toBe(200);
    const answers = answer.body as { id: string; result?: string; error?: { code: number } }[];
    expect(answers).toHaveLength(DEFAULT_MAX_BATCH_CALLS);
    const refused = answers.filter((a) => a.error?.code === -32029);
    expect(refused).toHaveLength(DEFAULT_MAX_BATCH_CALLS - 1);
    await proxy.stages.meter.flush();

    const to = new Date(Date.now() + 60_000).toISOString();
    const page = await user.client.gqlOk<{
      errorLogs: {
        logs: {
          requestId: string;
          errorKind: string;
          method: string;
          message: string;
          calls: number;
          failedCalls: number;
        }[];
      };
    }>(
      `query($e: String!, $from: DateTime!, $to: DateTime!) { errorLogs(endpointExId: $e, from: $from, to: $to, limit: 50) {
        logs { requestId errorKind method message calls failedCalls } } }`,
      { e: endpoint.exId, from, to },
    );
    expect(page.errorLogs.logs).toHaveLength(1);
    const [log] = page.errorLogs.logs;
    const firstRefused = answers.findIndex((a) => a.error);
    expect(log).toMatchObject({
      errorKind: "RATE_LIMITED",
      method: "eth_chainId",
      calls: DEFAULT_MAX_BATCH_CALLS,
      failedCalls: DEFAULT_MAX_BATCH_CALLS - 1,
    });
    expect(log.requestId).toMatch(new RegExp(`\\.${firstRefused}$`));
    expect(log.message).toContain(
      `(${DEFAULT_MAX_BATCH_CALLS - 1} of ${DEFAULT_MAX_BATCH_CALLS} calls failed: RATE_LIMITED ${DEFAULT_MAX_BATCH_CALLS - 1})`,
    );

    const details = await user.client.gqlOk<{ errorLogDetails: { request: string; response: string } }>(
      `query($e: String!, $r: String!) { errorLogDetails(endpointExId: $e, requestId: $r) { request response } }`,
      { e: endpoint.exId, r: log.requestId },
    );
    for (const body of [details.errorLogDetails.request, details.errorLogDetails.response]) {
      expect(Buffer.byteLength(body)).toBeLessThan(BODY_LIMIT + 100);
      expect(body).toMatch(/more bytes not kept\]$/);
    }
  });
});
