import { createServer } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { staticUpstreams } from "../../../server/dataplane/chain/nodes.ts";
import { EndpointCache } from "../../../server/dataplane/proxy/directory.ts";
import { attachFastLane, parseHead } from "../../../server/dataplane/proxy/fastlane.ts";
import { DataPlane } from "../../../server/dataplane/proxy/plane.ts";
import { call, type Harness, SEPOLIA, startHarness } from "./harness.ts";

const head = (text: string) => Buffer.from(text.replace(/\n/g, "\r\n"));

describe("the fast lane's reading of a request head", () => {
  const post = (headers: string, path = "/rpc/x") => head(`POST ${path} HTTP/1.1\nhost: a\n${headers}\n`);

  it("takes a plain JSON-RPC POST, and waits for the rest of one that may still become one", () => {
    expect(parseHead(post("content-length: 12\nconnection: close\n"), 100)).toMatchObject({
      kind: "rpc",
      url: "/rpc/x",
      bodyLength: 12,
      close: true,
      headers: { host: "a", "content-length": "12" },
    });
    expect(parseHead(post("content-length: 2\nconstructor: x\n__proto__: y\n"), 100)).toMatchObject({
      kind: "rpc",
      headers: { constructor: "x", ["__proto__"]: "y" },
    });
    expect(parseHead(Buffer.from("PO"), 100)).toEqual({ kind: "incomplete" });
    expect(parseHead(Buffer.from("POST /rpc/x HTTP/1.1\r\nhost:"), 100)).toEqual({ kind: "incomplete" });
  });

  it.each([
    ["another method", head("GET /rpc/x HTTP/1.1\nhost: a\n\n")],
    ["the first bytes of another method", Buffer.from("GE")],
    ["HTTP/1.0", head("POST /rpc/x HTTP/1.0\nhost: a\ncontent-length: 2\n\n")],
    ["a chunked body", post("transfer-encoding: chunked\n")],
    ["no content-length", post("")],
    ["a content-length that is not a number", post("content-length: 1e3\n")],
    ["a body over the limit", post("content-length: 101\n")],
    ["a repeated header", post("content-length: 2\ncontent-length: 2\n")],
    ["no host", head("POST /rpc/x HTTP/1.1\ncontent-length: 2\n\n")],
    ["Expect", post("content-length: 2\nexpect: 100-continue\n")],
    ["Upgrade", post("content-length: 2\nupgrade: websocket\nconnection: upgrade\n")],
    ["a line ending in a bare LF", Buffer.from("POST /rpc/x HTTP/1.1\r\nhost: a\ncontent-length: 2\r\n\r\n")],
    ["a header folded onto the next line", post("content-length: 2\nx-a: b\n c\n")],
    ["a control character in a value", post("content-length: 2\nx-a: b\u0001\n")],
    ["a head longer than 16 KiB", Buffer.from(`POST /rpc/x HTTP/1.1\r\nx-a: ${"a".repeat(17_000)}`)],
  ])("leaves %s to node:http", (_name, bytes) => {
    expect(parseHead(bytes, 100)).toEqual({ kind: "other" });
  });
});

/** HTTP answers read off a raw socket, in order (content-length framing, as both the lane and node send). */
class RawClient {
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  ended = false;

  constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiting?.();
    });
    socket.on("end", () => {
      this.ended = true;
      this.waiting?.();
    });
  }

  static open(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new RawClient(socket)));
      socket.on("error", reject);
    });
  }

  async answer(): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    while (true) {
      const end = this.buffered.indexOf("\r\n\r\n");
      if (end >= 0) {
        const [statusLine, ...lines] = this.buffered.toString("latin1", 0, end).split("\r\n");
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(":")).toLowerCase(),
            line.slice(line.indexOf(":") + 1).trim(),
          ]),
        );
        const length = Number(headers["content-length"]);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.toString("utf8", end + 4, end + 4 + length);
          this.buffered = this.buffered.subarray(end + 4 + length);
          return { status: Number(statusLine.split(" ")[1]), headers, body };
        }
      }
      if (this.ended) throw new Error("the connection ended before a whole answer");
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
      this.waiting = null;
    }
  }
}

const rpcPost = (path: string, body: unknown, extra = "") => {
  const text = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${extra}\r\n${text}`;
};
const resultOf = (answer: { body: string }) => JSON.parse(answer.body) as { id: number; result?: string };
const chainIdHex = `0x${SEPOLIA.toString(16)}`;

describe("the fast lane on a real connection", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.put({ exId: "lane" });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it("answers pipelined calls in order, then hands the connection to node:http for the console", async () => {
    const client = await RawClient.open(h.port);
    client.socket.write(
      rpcPost("/rpc/lane", call("eth_chainId", [], 1)) +
        rpcPost("/rpc/lane", call("eth_chainId", [], 2)) +
        "GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
    );
    const first = await client.answer();
    const second = await client.answer();
    const console = await client.answer();
    expect([resultOf(first), resultOf(second)]).toEqual([
      { jsonrpc: "2.0", id: 1, result: chainIdHex },
      { jsonrpc: "2.0", id: 2, result: chainIdHex },
    ]);
    // The lane's answers carry no Keep-Alive header; node:http's do.
    expect(first.headers["keep-alive"]).toBeUndefined();
    expect(first.headers["x-request-id"]).toBeTruthy();
    expect(console).toMatchObject({ status: 200, body: "the console" });
    expect(console.headers["keep-alive"]).toBeDefined();
    // The connection stays with node:http, which still serves RPC on it.
    client.socket.write(rpcPost("/rpc/lane", call("eth_chainId", [], 3)));
    const after = await client.answer();
    expect(resultOf(after)).toMatchObject({ id: 3, result: chainIdHex });
    expect(after.headers["keep-alive"]).toBeDefined();
    client.socket.destroy();
  });

  it("reads each head as sent when a kept-alive client repeats or changes it", async () => {
    h.put({ exId: "lan2", status: "PAUSED" });
    const client = await RawClient.open(h.port);
    // The same head bytes three times (bodies of one length), then another path, then the first again.
    client.socket.write(
      rpcPost("/rpc/lane", call("eth_chainId", [], 11)) +
        rpcPost("/rpc/lane", call("eth_chainId", [], 12)) +
        rpcPost("/rpc/lane", call("eth_chainId", [], 13)) +
        rpcPost("/rpc/lan2", call("eth_chainId", [], 14)) +
        rpcPost("/rpc/lane", call("eth_chainId", [], 15), "x-request-id: mine\r\n"),
    );
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await client.answer());
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 423, 200]);
    expect(answers.slice(0, 3).map((a) => resultOf(a).id)).toEqual([11, 12, 13]);
    expect(resultOf(answers[4])).toMatchObject({ id: 15, result: chainIdHex });
    expect(answers[4].headers["x-request-id"]).toBe("mine");
    client.socket.destroy();
  });

  it("reads a request that arrives a byte at a time", async () => {
    const client = await RawClient.open(h.port);
    for (const byte of Buffer.from(rpcPost("/rpc/lane", call("eth_chainId", [], 7)))) {
      client.socket.write(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const answer = await client.answer();
    expect(resultOf(answer)).toMatchObject({ id: 7, result: chainIdHex });
    expect(answer.headers["keep-alive"]).toBeUndefined();
    client.socket.destroy();
  });

  it("leaves a chunked call to node:http, which answers it the same", async () => {
    const client = await RawClient.open(h.port);
    const body = JSON.stringify(call("eth_chainId", [], 8));
    client.socket.write(
      `POST /rpc/lane HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    const answer = await client.answer();
    expect(resultOf(answer)).toMatchObject({ id: 8, result: chainIdHex });
    expect(answer.headers["keep-alive"]).toBeDefined();
    client.socket.destroy();
  });

  it("closes after an answer to Connection: close, and answers refusals and unknown endpoints itself", async () => {
    const client = await RawClient.open(h.port);
    client.socket.write(
      rpcPost("/rpc/no-such-endpoint", call("eth_chainId")) +
        rpcPost("/rpc/lane", call("eth_chainId", [], 9), "connection: close\r\n"),
    );
    expect((await client.answer()).status).toBe(404);
    const last = await client.answer();
    expect(resultOf(last)).toMatchObject({ id: 9 });
    expect(last.headers.connection).toBe("close");
    await expect.poll(() => client.ended).toBe(true);
  });

  it("a body over the limit goes to node:http, which refuses it with 413", async () => {
    const small = await startHarness({ maxBodyBytes: 64 });
    try {
      small.put({ exId: "small" });
      const client = await RawClient.open(small.port);
      client.socket.write(rpcPost("/rpc/small", call("eth_call", [{ data: `0x${"00".repeat(100)}` }])));
      expect((await client.answer()).status).toBe(413);
      client.socket.destroy();
    } finally {
      await small.close();
    }
  }, 60_000);

  it("lets the server close with an idle connection still in the lane", async () => {
    const other = await startHarness();
    other.put({ exId: "idle" });
    const client = await RawClient.open(other.port);
    client.socket.write(rpcPost("/rpc/idle", call("eth_chainId")));
    await client.answer();
    await other.close();
    await expect.poll(() => client.ended || client.socket.destroyed).toBe(true);
  }, 60_000);
});

describe("the fast lane's limits", () => {
  it("closes a connection idle longer than the keep-alive time, and keeps one that is in use", async () => {
    const server = createServer((_req, res) => res.end("node"));
    const directory = new EndpointCache();
    const plane = new DataPlane({ directory, upstreams: staticUpstreams([]) });
    const lane = attachFastLane(server, {
      plane,
      keepAliveMs: 400,
      requestTimeoutMs: 10_000,
      targetOf: () => ({ exId: "none" }),
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const idle = await RawClient.open(port);
      const busy = await RawClient.open(port);
      const started = Date.now();
      // One call every 100 ms keeps `busy` open (each answered by the lane: the endpoint is unknown).
      while (Date.now() - started < 900) {
        busy.socket.write(rpcPost("/rpc/none", call("eth_chainId")));
        expect((await busy.answer()).status).toBe(404);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(idle.ended || idle.socket.destroyed).toBe(true);
      expect(busy.ended || busy.socket.destroyed).toBe(false);
      busy.socket.destroy();
    } finally {
      lane.closeConnections();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await plane.close();
    }
  });

  it("ends a request that trickles in slower than the request timeout", async () => {
    const server = createServer((_req, res) => res.end("node"));
    const plane = new DataPlane({ directory: new EndpointCache(), upstreams: staticUpstreams([]), maxBodyBytes: 1000 });
    attachFastLane(server, {
      plane,
      keepAliveMs: 10_000,
      requestTimeoutMs: 150,
      targetOf: () => ({ exId: "x" }),
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const client = await RawClient.open((server.address() as AddressInfo).port);
      client.socket.write("POST /rpc/x HTTP/1.1\r\n");
      await new Promise((resolve) => setTimeout(resolve, 250));
      client.socket.write("host: a\r\n");
      await expect.poll(() => client.ended || client.socket.destroyed).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await plane.close();
    }
  });
});
