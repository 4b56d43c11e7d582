import { createPublicClient, createWalletClient, http, webSocket } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { mainnet, sepolia } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSecurityOptions, hashToken } from "../../../server/dataplane/proxy/endpoint.ts";
import { refusals } from "../../../server/dataplane/proxy/jsonrpc.ts";
import { call, type Harness, rpc, SEPOLIA, startHarness, wsCall } from "./harness.ts";

// anvil's first default account: funded on every fresh anvil chain.
const anvilKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" as const;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ withMeter: true });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const errorCode = (body: unknown) => (body as { error: { code: number } }).error.code;

describe("endpoint status", () => {
  const statuses = ["PAUSED", "ARCHIVED", "DISABLED", "SUSPENDED", "LIMIT_REACHED", "CANCELED", "TERMINATED"] as const;
  it("each status answers a distinct documented JSON-RPC code, over HTTP and WebSocket", async () => {
    const codes = new Set<number>();
    for (const status of statuses) {
      h.put({ exId: `status-${status}`, status });
      const res = await rpc(h.port, `/rpc/status-${status}`, call("eth_chainId"));
      expect(res.status, status).toBe(refusals[status].http);
      expect(errorCode(res.body), status).toBe(refusals[status].code);
      codes.add(refusals[status].code);
      const ws = await wsCall(h.port, `/rpc/status-${status}`, call("eth_chainId"));
      expect(ws).toMatchObject({ opened: false, status: refusals[status].http });
    }
    expect(codes.size).toBe(statuses.length);
    // The five the issue names also have distinct HTTP statuses.
    expect(
      new Set(["PAUSED", "ARCHIVED", "DISABLED", "SUSPENDED", "LIMIT_REACHED"].map((s) => refusals[s as "PAUSED"].http))
        .size,
    ).toBe(5);
  });

  it("an unknown endpoint answers 404", async () => {
    const res = await rpc(h.port, "/rpc/does-not-exist", call("eth_chainId"));
    expect(res.status).toBe(404);
    expect(errorCode(res.body)).toBe(refusals.NOT_FOUND.code);
  });

  it("a status change applies to an open WebSocket at its next message", async () => {
    const record = h.put({ exId: "pause-live" });
    const out = await wsCall(h.port, "/rpc/pause-live", call("eth_chainId"));
    if (!out.opened) throw new Error("did not open");
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      out.ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    h.directory.put({ ...record, status: "PAUSED" });
    out.ws.send(JSON.stringify(call("eth_chainId", [], 2)));
    expect(await closed).toEqual({ code: 1008, reason: refusals.PAUSED.message });
  });
});

describe("network without an upstream", () => {
  it("answers 503 naming the network", async () => {
    h.put({ exId: "no-upstream", network: "polygon-mainnet", chainId: 137 });
    const res = await rpc(h.port, "/rpc/no-upstream", call("eth_chainId"));
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      error: { code: refusals.NO_UPSTREAM.code, message: expect.stringContaining("polygon-mainnet") },
    });
    const ws = await wsCall(h.port, "/rpc/no-upstream", call("eth_chainId"));
    expect(ws).toMatchObject({ opened: false, status: 503 });
  });
});

describe("JSON-RPC over HTTP", () => {
  it("forwards a batch and keeps its order", async () => {
    h.put({ exId: "batch" });
    const res = await rpc(h.port, "/rpc/batch", [call("eth_chainId", [], 1), call("net_version", [], "two")]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { jsonrpc: "2.0", id: 1, result: "0xaa36a7" },
      { jsonrpc: "2.0", id: "two", result: "11155111" },
    ]);
  });

  it("answers the refused calls of a batch itself and forwards the rest, in order", async () => {
    h.put({ exId: "batch-mixed", disabledMethods: ["eth_blockNumber"] });
    const res = await rpc(h.port, "/rpc/batch-mixed", [
      call("eth_blockNumber", [], 1),
      call("eth_chainId", [], 2),
      call("eth_blockNumber", [], 3),
    ]);
    const body = res.body as { id: number; error?: { code: number }; result?: string }[];
    expect(body.map((b) => b.id)).toEqual([1, 2, 3]);
    expect(body[0].error?.code).toBe(refusals.METHOD_DISABLED.code);
    expect(body[1].result).toBe("0xaa36a7");
    expect(body[2].error?.code).toBe(refusals.METHOD_DISABLED.code);
  });

  it("never forwards the node's administration, test controls or signing with its keys, on any endpoint", async () => {
    h.put({ exId: "node-only" });
    const victim = "0x00000000000000000000000000000000000000aa";
    const balance = async () => (await rpc(h.port, "/rpc/node-only", call("eth_getBalance", [victim, "latest"]))).body;
    const before = await balance();
    const refused = [
      call("anvil_setBalance", [victim, "0x3635c9adc5dea00000"], 1),
      call("hardhat_setBalance", [victim, "0x1"], 2),
      call("anvil_reset", [], 3),
      call("evm_mine", [], 4),
      call("eth_sendTransaction", [{ from: privateKeyToAccount(anvilKey).address, to: victim, value: "0x1" }], 5),
      call("personal_unlockAccount", [victim, ""], 6),
      call("admin_peers", [], 7),
    ];
    const res = await rpc(h.port, "/rpc/node-only", [...refused, call("eth_chainId", [], 8)]);
    const body = res.body as { id: number; error?: { code: number; message: string }; result?: string }[];
    expect(body.slice(0, 7).map((b) => b.error?.code)).toEqual(Array(7).fill(refusals.METHOD_NOT_AVAILABLE.code));
    expect(body[0].error?.message).toBe("The method anvil_setBalance is not available on this service.");
    expect(body[7].result).toBe("0xaa36a7");
    const single = await rpc(h.port, "/rpc/node-only", refused[0]);
    expect(errorCode(single.body)).toBe(refusals.METHOD_NOT_AVAILABLE.code);
    const ws = await wsCall(h.port, "/rpc/node-only", refused[0]);
    if (!ws.opened) throw new Error("did not open");
    expect(errorCode(ws.answer)).toBe(refusals.METHOD_NOT_AVAILABLE.code);
    ws.ws.close();
    expect(await balance()).toEqual(before);
  });

  it("never forwards anvil's ways of sending from an address without its signature, nor wallet methods", async () => {
    h.put({ exId: "unsigned" });
    const victim = "0x00000000000000000000000000000000000000bb";
    const balance = async () => (await rpc(h.port, "/rpc/unsigned", call("eth_getBalance", [victim, "latest"]))).body;
    const before = await balance();
    const from = privateKeyToAccount(anvilKey).address;
    const refused = [
      // Any funded address, unsigned (anvil's extension).
      call("eth_sendUnsignedTransaction", [{ from, to: victim, value: "0x1" }], 1),
      // eth_sendTransaction signed with the node's key, waiting for the receipt.
      call("eth_sendTransactionSync", [{ from, to: victim, value: "0x1" }], 2),
      // EIP-5792's wallet methods sign with the keys a wallet holds.
      call("wallet_sendCalls", [{ version: "1.0", from, calls: [{ to: victim, value: "0x1" }] }], 3),
    ];
    const res = await rpc(h.port, "/rpc/unsigned", refused);
    const body = res.body as { id: number; error?: { code: number; message: string } }[];
    expect(body.map((b) => b.error)).toEqual(
      ["eth_sendUnsignedTransaction", "eth_sendTransactionSync", "wallet_sendCalls"].map((method) => ({
        code: refusals.METHOD_NOT_AVAILABLE.code,
        message: `The method ${method} is not available on this service.`,
      })),
    );
    expect(await balance()).toEqual(before);
  });

  it("answers a body that is not JSON with a parse error", async () => {
    h.put({ exId: "parse" });
    const res = await rpc(h.port, "/rpc/parse", "{not json");
    expect(res.status).toBe(400);
    expect(errorCode(res.body)).toBe(-32700);
  });

  it("serves viem's public and wallet clients", async () => {
    h.put({
      exId: "viem",
      options: { ...defaultSecurityOptions(), tokens: true },
      tokenHashes: [hashToken("viem-token")],
    });
    const transport = http(`${h.url}/rpc/viem/viem-token`);
    const client = createPublicClient({ chain: sepolia, transport });
    expect(await client.getChainId()).toBe(11155111);
    const block = await client.getBlock();
    expect(block.number).toBeGreaterThanOrEqual(0n);
    const wallet = createWalletClient({ chain: sepolia, transport, account: privateKeyToAccount(anvilKey) });
    const hash = await wallet.sendTransaction({ to: "0x000000000000000000000000000000000000dEaD", value: 1n });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 200 });
    expect(receipt.status).toBe("success");
  });
});

describe("options that add headers or route", () => {
  it("hsts adds Strict-Transport-Security only when on", async () => {
    h.put({ exId: "hsts-on", options: { ...defaultSecurityOptions(), hsts: true } });
    h.put({ exId: "hsts-off" });
    expect((await rpc(h.port, "/rpc/hsts-on", call("eth_chainId"))).headers["strict-transport-security"]).toMatch(
      /max-age=\d+/,
    );
    expect(
      (await rpc(h.port, "/rpc/hsts-off", call("eth_chainId"))).headers["strict-transport-security"],
    ).toBeUndefined();
  });

  it("cors answers preflight and adds Access-Control headers only when on", async () => {
    h.put({ exId: "cors-on", options: { ...defaultSecurityOptions(), cors: true } });
    h.put({ exId: "cors-off" });
    const origin = { origin: "https://dapp.example" };
    const pre = await rpc(
      h.port,
      "/rpc/cors-on",
      undefined,
      { ...origin, "access-control-request-method": "POST" },
      "OPTIONS",
    );
    expect(pre.status).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("https://dapp.example");
    expect(pre.headers["access-control-allow-headers"]).toContain("x-token");
    expect(
      (await rpc(h.port, "/rpc/cors-on", call("eth_chainId"), origin)).headers["access-control-allow-origin"],
    ).toBe("https://dapp.example");
    const off = await rpc(h.port, "/rpc/cors-off", undefined, origin, "OPTIONS");
    expect(off.headers["access-control-allow-origin"]).toBeUndefined();
    expect(
      (await rpc(h.port, "/rpc/cors-off", call("eth_chainId"), origin)).headers["access-control-allow-origin"],
    ).toBeUndefined();
  });

  it("domainMasks route a host name to the endpoint, over HTTP and WebSocket, only when on", async () => {
    h.put({
      exId: "mask-on",
      options: { ...defaultSecurityOptions(), domainMasks: true, tokens: true },
      domainMasks: ["rpc.mydapp.test"],
      tokenHashes: [hashToken("mask-token")],
    });
    h.put({ exId: "mask-off", domainMasks: ["rpc.other.test"] });
    const on = await rpc(h.port, "/mask-token", call("eth_chainId"), { host: "rpc.mydapp.test" });
    expect(on.body).toEqual({ jsonrpc: "2.0", id: 1, result: "0xaa36a7" });
    const noToken = await rpc(h.port, "/", call("eth_chainId"), { host: "rpc.mydapp.test:443" });
    expect(noToken.status).toBe(401);
    const ws = await wsCall(h.port, "/mask-token", call("eth_chainId"), { host: "rpc.mydapp.test" });
    expect(ws.opened).toBe(true);
    if (ws.opened) {
      expect(ws.answer).toEqual({ jsonrpc: "2.0", id: 1, result: "0xaa36a7" });
      ws.ws.close();
    }
    // With the option off the host is not routed: the console answers it.
    const off = await rpc(h.port, "/", undefined, { host: "rpc.other.test" }, "GET");
    expect(off.text).toBe("the console");
  });
});

describe("enforceChainNetwork", () => {
  const signFor = async (chainId: number) => {
    const account = privateKeyToAccount(anvilKey);
    return account.signTransaction({
      chainId,
      type: "eip1559",
      to: "0x000000000000000000000000000000000000dEaD",
      value: 1n,
      nonce: 1000,
      gas: 21000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
  };

  it("refuses a transaction signed for another chain when on", async () => {
    h.put({ exId: "chain-on", options: { ...defaultSecurityOptions(), enforceChainNetwork: true } });
    const wrong = await rpc(h.port, "/rpc/chain-on", call("eth_sendRawTransaction", [await signFor(mainnet.id)]));
    expect(wrong.status).toBe(200);
    expect(errorCode(wrong.body)).toBe(refusals.WRONG_CHAIN.code);
    const wrongCall = await rpc(
      h.port,
      "/rpc/chain-on",
      call("eth_call", [{ to: "0x000000000000000000000000000000000000dEaD", chainId: "0x1" }, "latest"]),
    );
    expect(errorCode(wrongCall.body)).toBe(refusals.WRONG_CHAIN.code);
    const ws = await wsCall(h.port, "/rpc/chain-on", call("eth_sendRawTransaction", [await signFor(mainnet.id)]));
    if (!ws.opened) throw new Error("did not open");
    expect(errorCode(ws.answer)).toBe(refusals.WRONG_CHAIN.code);
    ws.ws.close();
    // The right chain is forwarded: anvil answers (here about the nonce), not the proxy.
    const right = await rpc(h.port, "/rpc/chain-on", call("eth_sendRawTransaction", [await signFor(sepolia.id)]));
    expect(JSON.stringify(right.body)).not.toContain(String(refusals.WRONG_CHAIN.code));
  });

  it("lets the node judge when off", async () => {
    h.put({ exId: "chain-off" });
    const res = await rpc(h.port, "/rpc/chain-off", call("eth_sendRawTransaction", [await signFor(mainnet.id)]));
    expect(JSON.stringify(res.body)).not.toContain(String(refusals.WRONG_CHAIN.code));
    expect(res.body).toHaveProperty("error");
  });
});

describe("WebSocket", () => {
  it("delivers eth_subscribe newHeads notifications (viem watchBlockNumber)", async () => {
    h.put({ exId: "subs" });
    const client = createPublicClient({ chain: sepolia, transport: webSocket(`ws://127.0.0.1:${h.port}/rpc/subs`) });
    const seen = await new Promise<bigint[]>((resolve) => {
      const numbers: bigint[] = [];
      const stop = client.watchBlockNumber({
        onBlockNumber: (n) => {
          numbers.push(n);
          if (numbers.length === 2) {
            stop();
            resolve(numbers);
          }
        },
      });
    });
    expect(seen[1]).toBeGreaterThan(seen[0]);
  }, 15_000);

  it("closes an open connection when its token is deleted", async () => {
    const record = h.put({
      exId: "revoke",
      options: { ...defaultSecurityOptions(), tokens: true },
      tokenHashes: [hashToken("t1"), hashToken("t2")],
    });
    const out = await wsCall(h.port, "/rpc/revoke/t1", call("eth_chainId"));
    if (!out.opened) throw new Error("did not open");
    const closed = new Promise<number>((resolve) => out.ws.on("close", (code) => resolve(code)));
    h.directory.put({ ...record, tokenHashes: [hashToken("t2")] });
    out.ws.send(JSON.stringify(call("eth_chainId", [], 2)));
    expect(await closed).toBe(1008);
    expect((await rpc(h.port, "/rpc/revoke/t1", call("eth_chainId"))).status).toBe(401);
    expect((await rpc(h.port, "/rpc/revoke/t2", call("eth_chainId"))).status).toBe(200);
  });
});

describe("stage seams", () => {
  it("the meter sees each request with its methods, status and refusals", async () => {
    h.put({ exId: "metered", disabledMethods: ["eth_blockNumber"] });
    h.meterEvents.length = 0;
    await rpc(h.port, "/rpc/metered", [call("eth_chainId", [], 1), call("eth_blockNumber", [], 2)]);
    expect(h.meterEvents).toHaveLength(1);
    expect(h.meterEvents[0]).toMatchObject({
      transport: "http",
      methods: ["eth_chainId", "eth_blockNumber"],
      httpStatus: 200,
      refused: [{ index: 1, refusal: { code: refusals.METHOD_DISABLED.code } }],
      requestRefusal: null,
    });
    expect(h.meterEvents[0].clientIp).toBe("127.0.0.1");
  });

  it("a meter that throws is reported and the caller still gets the node's answer", async () => {
    const reported: unknown[] = [];
    const failing = await startHarness({
      meter: {
        record: () => {
          throw new Error("meter broke");
        },
      },
      onError: (error) => reported.push(error),
    });
    try {
      failing.put({ exId: "meter-throws" });
      const answer = await rpc(failing.port, "/rpc/meter-throws", call("eth_chainId"));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ result: `0x${SEPOLIA.toString(16)}` });
      await expect.poll(() => reported.map((e) => (e as Error).message)).toEqual(["meter broke"]);
    } finally {
      await failing.close();
    }
  }, 60_000);

  it("every HTTP answer carries x-request-id, and the meter gets it with the URL, calls and bodies", async () => {
    h.put({ exId: "ids" });
    h.meterEvents.length = 0;
    const body = call("eth_chainId");
    const res = await rpc(h.port, "/rpc/ids", body);
    const id = res.headers["x-request-id"];
    expect(id).toMatch(/^[0-9a-f]+-[0-9a-z]+$/);
    expect((await rpc(h.port, "/rpc/no-such-endpoint", body)).headers["x-request-id"]).toBeTruthy();
    expect((await rpc(h.port, "/rpc/ids", body, { "x-request-id": "mine-1" })).headers["x-request-id"]).toBe("mine-1");
    expect(h.meterEvents[0]).toMatchObject({ requestId: id, httpMethod: "POST", url: "/rpc/ids", calls: [body] });
    expect(String(h.meterEvents[0].requestBody)).toBe(JSON.stringify(body));
    expect(String(h.meterEvents[0].responseBody)).toBe(res.text);
  });

  it("a WebSocket message is metered with its reply's bytes, a notification as eth_subscription", async () => {
    h.put({ exId: "ws-meter" });
    h.meterEvents.length = 0;
    const out = await wsCall(h.port, "/rpc/ws-meter", call("eth_subscribe", ["newHeads"], 5));
    if (!out.opened) throw new Error("did not open");
    const notified = new Promise<void>((resolve) => out.ws.on("message", () => resolve()));
    await notified;
    out.ws.close();
    await new Promise((r) => setTimeout(r, 50));
    const subscribe = h.meterEvents.find((e) => e.methods[0] === "eth_subscribe");
    expect(subscribe).toMatchObject({ transport: "ws", httpMethod: "WS", url: "/rpc/ws-meter" });
    expect(subscribe?.responseBytes).toBe(Buffer.byteLength(JSON.stringify(out.answer)));
    const notification = h.meterEvents.find((e) => e.methods[0] === "eth_subscription");
    expect(notification?.responseBytes).toBeGreaterThan(100);
  }, 15_000);

  it("a stage that fails answers 500 (HTTP) or closes with 1011 (WebSocket), and the proxy goes on", async () => {
    const failing = await startHarness({
      rateLimit: {
        admit: async (req) => {
          if (req.methods.includes("eth_getBalance")) throw new Error("limiter store unreachable");
          return undefined;
        },
      },
    });
    try {
      failing.put({ exId: "fails" });
      const res = await rpc(
        failing.port,
        "/rpc/fails",
        call("eth_getBalance", ["0x000000000000000000000000000000000000dEaD", "latest"]),
      );
      expect(res.status).toBe(500);
      expect(errorCode(res.body)).toBe(refusals.INTERNAL.code);
      expect((await rpc(failing.port, "/rpc/fails", call("eth_chainId"))).status).toBe(200);
      const ws = await wsCall(failing.port, "/rpc/fails", call("eth_chainId"));
      if (!ws.opened) throw new Error("did not open");
      const closed = new Promise<number>((resolve) => ws.ws.on("close", (code) => resolve(code)));
      ws.ws.send(JSON.stringify(call("eth_getBalance", ["0x000000000000000000000000000000000000dEaD", "latest"], 2)));
      expect(await closed).toBe(1011);
    } finally {
      await failing.close();
    }
  }, 30_000);

  it("a rate-limit stage can refuse a whole request or single calls", async () => {
    const limited = await startHarness({
      rateLimit: {
        admit: (req) =>
          req.methods.includes("eth_getBalance")
            ? { refuse: { kind: "RATE_LIMITED", http: 429, code: -32029, message: "slow down" } }
            : {
                perCall: req.methods.map((m) =>
                  m === "net_version"
                    ? { kind: "RATE_LIMITED", http: 200, code: -32029, message: "slow down" }
                    : undefined,
                ),
              },
      },
    });
    try {
      limited.put({ exId: "rl" });
      const whole = await rpc(
        limited.port,
        "/rpc/rl",
        call("eth_getBalance", ["0x000000000000000000000000000000000000dEaD", "latest"]),
      );
      expect(whole.status).toBe(429);
      const batch = await rpc(limited.port, "/rpc/rl", [call("eth_chainId", [], 1), call("net_version", [], 2)]);
      expect(
        (batch.body as { result?: string; error?: { code: number } }[]).map((b) => b.result ?? b.error?.code),
      ).toEqual(["0xaa36a7", -32029]);
    } finally {
      await limited.close();
    }
  }, 30_000);
});
