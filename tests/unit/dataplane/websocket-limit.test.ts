import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WEBSOCKETS_RETRY_AFTER_MS } from "../../../server/dataplane/proxy/admission.ts";
import { refusals } from "../../../server/dataplane/proxy/jsonrpc.ts";
import { call, type Harness, startHarness, type WsOutcome, wsCall } from "./harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ withMeter: true, maxWebSocketsPerAccount: 2 });
});
afterAll(async () => {
  await h?.close();
});

const opened = (outcome: WsOutcome) => {
  if (!outcome.opened) throw new Error(`refused: ${outcome.status} ${outcome.body}`);
  return outcome.ws;
};

describe("WebSocket connections per account", () => {
  it("are bounded across the account's endpoints; a closed one makes room; other accounts are not counted", async () => {
    h.put({ exId: "ws-first" });
    h.put({ exId: "ws-second" });
    h.put({ exId: "ws-other", accountId: "account-2" });
    const first = opened(await wsCall(h.port, "/rpc/ws-first", call("eth_chainId")));
    const second = opened(await wsCall(h.port, "/rpc/ws-second", call("eth_chainId")));
    const third = await wsCall(h.port, "/rpc/ws-first", call("eth_chainId"));
    expect(third.opened).toBe(false);
    if (third.opened) return;
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body).error.code).toBe(refusals.TOO_MANY_WEBSOCKETS.code);
    const other = opened(await wsCall(h.port, "/rpc/ws-other", call("eth_chainId")));

    const closed = new Promise((resolve) => first.once("close", resolve));
    first.close();
    await closed;
    // The server sees the close a moment after the client: the next upgrade waits for it.
    let again: WsOutcome = await wsCall(h.port, "/rpc/ws-first", call("eth_chainId"));
    for (let i = 0; i < 250 && !again.opened; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await wsCall(h.port, "/rpc/ws-first", call("eth_chainId"));
    }
    const reopened = opened(again);
    for (const ws of [second, other, reopened]) ws.close();
  });

  it("a refused upgrade says when to try again: Retry-After and data.retryAfter, a back-off since the proxy cannot foresee a close", async () => {
    h.put({ exId: "ws-backoff", accountId: "account-backoff" });
    const held = [
      opened(await wsCall(h.port, "/rpc/ws-backoff", call("eth_chainId"))),
      opened(await wsCall(h.port, "/rpc/ws-backoff", call("eth_chainId"))),
    ];
    const refused = await wsCall(h.port, "/rpc/ws-backoff", call("eth_chainId"));
    for (const ws of held) ws.close();
    if (refused.opened) throw new Error("the third connection was accepted");
    expect(refused.status).toBe(429);
    // Before: no Retry-After, so clients retried at once.
    expect(refused.retryAfter).toBe(String(WEBSOCKETS_RETRY_AFTER_MS / 1000));
    const { error } = JSON.parse(refused.body);
    expect(error).toMatchObject({
      code: refusals.TOO_MANY_WEBSOCKETS.code,
      message: refusals.TOO_MANY_WEBSOCKETS.message,
      data: { retryAfter: WEBSOCKETS_RETRY_AFTER_MS / 1000, retryAfterMs: WEBSOCKETS_RETRY_AFTER_MS },
    });
    expect(refused.body).not.toContain("account-backoff");
  });
});
