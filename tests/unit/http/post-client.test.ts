import { readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AnswerParser,
  AnswerTimeout,
  HttpProtocolError,
  PostClient,
} from "../../../server/dataplane/http/post-client.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const urlAt = (port: number, path = "/") => `http://127.0.0.1:${port}${path}`;

/** A TCP server that answers each request head with what `answer` writes, so framing can be scripted byte by byte. */
async function scripted(
  answer: (socket: net.Socket, request: string, n: number) => void,
): Promise<{ port: number; connections: () => number; requests: string[] }> {
  let connections = 0;
  const requests: string[] = [];
  const server = net.createServer((socket) => {
    connections++;
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      for (;;) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const request = buffered.slice(0, end + 4 + length);
        buffered = buffered.slice(end + 4 + length);
        requests.push(request);
        answer(socket, request, requests.length);
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections, requests };
}

function client(options?: ConstructorParameters<typeof PostClient>[0]): PostClient {
  const c = new PostClient(options);
  closers.push(() => c.close());
  return c;
}

describe("AnswerParser", () => {
  const parse = (pieces: string[]) => {
    const p = new AnswerParser();
    let done = false;
    for (const piece of pieces) done = p.feed(Buffer.from(piece, "latin1"));
    return { done, p };
  };

  it("reads a content-length answer split at any byte", () => {
    const whole = 'HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\n{"ok":true}';
    for (let cut = 1; cut < whole.length; cut++) {
      const { done, p } = parse([whole.slice(0, cut), whole.slice(cut)]);
      expect(done).toBe(true);
      expect(p.status).toBe(200);
      expect(p.body().toString()).toBe('{"ok":true}');
      expect(p.keepAlive).toBe(true);
    }
  });

  it("reads a chunked answer with extensions and trailers, split at any byte", () => {
    const whole =
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\n{"a"\r\n6\r\n:[1,2]\r\n1\r\n}\r\n0\r\nx-t: 1\r\n\r\n';
    for (let cut = 1; cut < whole.length; cut++) {
      const { done, p } = parse([whole.slice(0, cut), whole.slice(cut)]);
      expect(done, `cut at ${cut}`).toBe(true);
      expect(p.body().toString()).toBe('{"a":[1,2]}');
    }
  });

  it("skips informational heads, honours connection: close and HTTP/1.0", () => {
    const { done, p } = parse([
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 No\r\nConnection: close\r\ncontent-length: 2\r\n\r\nno",
    ]);
    expect(done).toBe(true);
    expect(p.status).toBe(503);
    expect(p.keepAlive).toBe(false);
    expect(parse(["HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n"]).p.keepAlive).toBe(false);
  });

  it("an answer without length ends with the connection", () => {
    const { done, p } = parse(["HTTP/1.1 200 OK\r\n\r\nabc", "def"]);
    expect(done).toBe(false);
    expect(p.end()).toBe(true);
    expect(p.body().toString()).toBe("abcdef");
    expect(p.keepAlive).toBe(false);
  });

  it("refuses what is not HTTP and bad chunk framing", () => {
    expect(() => parse(["SSH-2.0-OpenSSH\r\n\r\n"])).toThrow(HttpProtocolError);
    expect(() => parse(["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"])).toThrow(HttpProtocolError);
  });
});

describe("PostClient", () => {
  it("sends the upstream URL's path, query and credentials, and reuses one connection", async () => {
    const server = await scripted((socket) => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
    const c = client();
    const url = `http://user:p%40ss@127.0.0.1:${server.port}/v3/key?x=1`;
    for (let i = 0; i < 3; i++) {
      const answer = await c.post(url, `{"i":${i}}`);
      expect(answer).toEqual({ status: 200, body: Buffer.from("ok") });
    }
    expect(server.connections()).toBe(1);
    expect(server.requests[2]).toMatch(/^POST \/v3\/key\?x=1 HTTP\/1\.1\r\n/);
    expect(server.requests[2]).toContain(`authorization: Basic ${Buffer.from("user:p@ss").toString("base64")}`);
    expect(server.requests[2]).toContain("content-type: application/json");
    expect(server.requests[2].endsWith('{"i":2}')).toBe(true);
  });

  it("sends a password whose percent-encoding is malformed as it is written, instead of failing the delivery", async () => {
    const server = await scripted((socket) => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
    const answer = await client().post(`http://user:50%zz@127.0.0.1:${server.port}/`, "{}");
    expect(answer.status).toBe(200);
    expect(server.requests[0]).toContain(`authorization: Basic ${Buffer.from("user:50%zz").toString("base64")}`);
  });

  it("opens a new connection after connection: close, and one per concurrent request", async () => {
    const server = await scripted((socket, _r, n) =>
      socket.write(`HTTP/1.1 200 OK\r\n${n === 1 ? "connection: close\r\n" : ""}content-length: 1\r\n\r\n${n}`),
    );
    const c = client();
    expect((await c.post(urlAt(server.port), "{}")).body.toString()).toBe("1");
    expect((await c.post(urlAt(server.port), "{}")).body.toString()).toBe("2");
    expect(server.connections()).toBe(2);
    await Promise.all([1, 2, 3].map(() => c.post(urlAt(server.port), "{}")));
    expect(server.connections()).toBe(4);
  });

  it("sends again on a new connection when a kept-alive one was closed by the upstream", async () => {
    // A real HTTP server with a short keep-alive: the idle connection is closed under the client.
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on("end", () => res.end("fine"));
    });
    server.keepAliveTimeout = 50;
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const port = (server.address() as net.AddressInfo).port;
    const c = client({ idleTimeoutMs: 60_000 });
    expect((await c.post(urlAt(port), "{}")).body.toString()).toBe("fine");
    await new Promise((r) => setTimeout(r, 200));
    expect((await c.post(urlAt(port), "{}")).body.toString()).toBe("fine");
  });

  it("rejects an answer cut off mid-body, a refused connection and a timeout", async () => {
    const cut = await scripted((socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc"));
    await expect(client().post(urlAt(cut.port), "{}")).rejects.toThrow(/closed the connection/);
    const silent = await scripted(() => {});
    await expect(client({ timeoutMs: 100 }).post(urlAt(silent.port), "{}")).rejects.toThrow(/within 100 ms/);
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(client().post(urlAt(port), "{}")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("keeps at most `connections` open and queues the rest", async () => {
    let open = 0;
    let most = 0;
    const server = await scripted((socket) => {
      setTimeout(() => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nk"), 20);
    });
    const c = client({ connections: 2 });
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        open++;
        most = Math.max(most, open);
        await c.post(urlAt(server.port), "{}");
        open--;
      }),
    );
    expect(server.connections()).toBe(2);
    expect(server.requests).toHaveLength(6);
    expect(most).toBe(6);
  });

  it("speaks TLS to an https upstream, checking its certificate", async () => {
    const dir = path.join(import.meta.dirname, "../../support/tls");
    const cert = readFileSync(path.join(dir, "localhost.crt"));
    const server = createHttpsServer({ key: readFileSync(path.join(dir, "localhost.key")), cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => res.end(`secure ${Buffer.concat(chunks).toString()}`));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const port = (server.address() as net.AddressInfo).port;
    const url = `https://localhost:${port}/`;
    const trusted = client({ ca: cert });
    expect((await trusted.post(url, "{}")).body.toString()).toBe("secure {}");
    expect((await trusted.post(url, "[1]")).body.toString()).toBe("secure [1]");
    // Without the test authority the self-signed certificate is refused.
    await expect(client().post(url, "{}")).rejects.toThrow(/self[- ]signed/i);
  });

  it("writes the caller's header lines into the head", async () => {
    const server = await scripted((socket) => socket.write("HTTP/1.1 204 No Content\r\n\r\n"));
    const answer = await client().post(urlAt(server.port), "[]", "x-one: 1\r\nx-two: two\r\n");
    expect(answer.status).toBe(204);
    const [head, body] = server.requests[0].split("\r\n\r\n");
    expect(head.split("\r\n").slice(-3)).toEqual(["content-length: 2", "x-one: 1", "x-two: two"]);
    expect(body).toBe("[]");
  });

  it("tells a timeout after the answer's head (with its status) from one before it", async () => {
    const stalled = await scripted((socket) => socket.write("HTTP/1.1 202 Accepted\r\ncontent-length: 10\r\n\r\npart"));
    const late = await client({ timeoutMs: 100 })
      .post(urlAt(stalled.port), "{}")
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(AnswerTimeout);
    expect(late).toMatchObject({ status: 202, timeoutMs: 100 });
    const silent = await scripted(() => {});
    const none = await client({ timeoutMs: 100 })
      .post(urlAt(silent.port), "{}")
      .catch((e: unknown) => e);
    expect(none).toMatchObject({ status: 0 });
  });
});
