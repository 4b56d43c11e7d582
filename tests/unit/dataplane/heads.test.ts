import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { NewHeads } from "../../../server/dataplane/chain/heads.ts";
import { staticUpstreams } from "../../../server/dataplane/chain/nodes.ts";

const NETWORK = "ethereum-mainnet";

function logCapture() {
  const lines: { level: "info" | "warn"; message: string }[] = [];
  return {
    lines,
    log: {
      info: (_: object, message?: string) => lines.push({ level: "info", message: message ?? "" }),
      warn: (_: object, message?: string) => lines.push({ level: "warn", message: message ?? "" }),
    },
  };
}

const headsOf = (wsUrl: string | null, log: ReturnType<typeof logCapture>["log"]) =>
  new NewHeads({
    upstreams: staticUpstreams([
      { network: NETWORK, chainId: 1, httpUrl: "http://127.0.0.1:1", wsUrl, source: "local" },
    ]),
    log,
    pollMs: 250,
  });

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A node's WebSocket that refuses eth_subscribe until `accepting`, then pushes the heads it is told to. */
async function fakeNode() {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const state = { accepting: false, clients: new Set<WebSocket>() };
  server.on("connection", (socket) => {
    state.clients.add(socket);
    socket.on("close", () => state.clients.delete(socket));
    socket.on("message", (data) => {
      const { id } = JSON.parse(data.toString()) as { id: number };
      socket.send(
        JSON.stringify(
          state.accepting
            ? { jsonrpc: "2.0", id, result: "0xsub" }
            : { jsonrpc: "2.0", id, error: { code: -32601, message: "the method eth_subscribe does not exist" } },
        ),
      );
    });
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    push(n: number) {
      const message = JSON.stringify({
        jsonrpc: "2.0",
        method: "eth_subscription",
        params: { subscription: "0xsub", result: { number: `0x${n.toString(16)}` } },
      });
      for (const c of state.clients) c.send(message);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe("new heads", () => {
  it("without a WebSocket URL: nothing is pushed, and the fallback to polling is logged once", () => {
    const { lines, log } = logCapture();
    const heads = headsOf(null, log);
    cleanup.push(() => heads.close());
    const watch = heads.watch(NETWORK);
    expect(watch.subscribed()).toBe(false);
    expect(watch.head()).toBeNull();
    watch.close();
    heads.watch(NETWORK).close();
    expect(lines).toEqual([
      {
        level: "warn",
        message: `new heads of ${NETWORK}: its node has no WebSocket URL; streams at the tip poll it every 250 ms`,
      },
    ]);
  });

  it("a refused subscription is logged and retried; once subscribed, heads wake watchers; a drop tells them", async () => {
    const node = await fakeNode();
    cleanup.push(() => node.close());
    const { lines, log } = logCapture();
    const heads = headsOf(node.url, log);
    cleanup.push(() => heads.close());
    const watch = heads.watch(NETWORK);
    let calls = 0;
    watch.listen(() => calls++);

    await until("the refusal", () => lines.some((l) => l.message.includes("eth_subscribe refused")));
    expect(lines[0].level).toBe("warn");
    expect(lines[0].message).toContain("streams at the tip poll the node every 250 ms");
    expect(watch.subscribed()).toBe(false);

    node.state.accepting = true;
    await until("the subscription", () => watch.subscribed());
    expect(lines.at(-1)?.message).toContain("WebSocket subscription back");
    expect(watch.head()).toBeNull();
    const before = calls;
    node.push(41);
    await until("the head", () => watch.head() === 41);
    expect(calls).toBeGreaterThan(before);

    const beforeDrop = calls;
    for (const c of node.state.clients) c.terminate();
    await until("the drop", () => !watch.subscribed());
    expect(watch.head()).toBeNull();
    expect(calls).toBeGreaterThan(beforeDrop);
    await until("the subscription again", () => watch.subscribed());
    // One warning per outage, not per attempt.
    expect(lines.filter((l) => l.level === "warn")).toHaveLength(2);
  });
});
