import net from "node:net";
import tls from "node:tls";
import type { Upstream } from "../chain/nodes.ts";

export interface UpstreamAnswer {
  status: number;
  body: Buffer;
}

/** The upstream broke HTTP/1.1 (or closed mid-answer); the connection is not reused. */
export class UpstreamProtocolError extends Error {}

const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * Reads one HTTP/1.1 answer from a connection's bytes: the head, then a body framed by content-length,
 * chunked transfer coding, or the connection's end. Informational (1xx) heads are skipped.
 */
export class AnswerParser {
  status = 0;
  /** Whether the connection may carry another request after this answer. */
  keepAlive = true;
  private state: "head" | "length" | "chunk-size" | "chunk-data" | "chunk-end" | "trailers" | "until-close" | "done" =
    "head";
  private pending: Buffer = Buffer.alloc(0);
  private remaining = 0;
  private readonly parts: Buffer[] = [];
  /** Whether any byte of an answer has arrived (so a failure may no longer be retried). */
  started = false;

  get done(): boolean {
    return this.state === "done";
  }

  body(): Buffer {
    return this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
  }

  /** Feeds bytes; returns true once the answer is complete. Throws UpstreamProtocolError on bad framing. */
  feed(chunk: Buffer): boolean {
    this.started = true;
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    while (data.length > 0 && this.state !== "done") {
      switch (this.state) {
        case "head": {
          const end = data.indexOf(HEAD_END);
          if (end < 0) {
            if (data.length > MAX_HEAD_BYTES)
              throw new UpstreamProtocolError("The upstream's answer head is too large.");
            this.pending = data;
            return false;
          }
          this.readHead(data.toString("latin1", 0, end));
          data = data.subarray(end + 4);
          break;
        }
        case "length": {
          const n = Math.min(this.remaining, data.length);
          this.parts.push(data.subarray(0, n));
          this.remaining -= n;
          data = data.subarray(n);
          if (this.remaining === 0) this.state = "done";
          break;
        }
        case "chunk-size":
        case "chunk-end":
        case "trailers": {
          const eol = data.indexOf(CRLF);
          if (eol < 0) {
            if (data.length > MAX_HEAD_BYTES) throw new UpstreamProtocolError("A chunk line is too long.");
            this.pending = data;
            return false;
          }
          const line = data.toString("latin1", 0, eol);
          data = data.subarray(eol + 2);
          if (this.state === "chunk-end") {
            if (line !== "") throw new UpstreamProtocolError("A chunk does not end with CRLF.");
            this.state = "chunk-size";
          } else if (this.state === "trailers") {
            if (line === "") this.state = "done";
          } else {
            const size = Number.parseInt(line.split(";")[0].trim(), 16);
            if (!Number.isFinite(size) || size < 0) throw new UpstreamProtocolError("A chunk size is not hexadecimal.");
            this.remaining = size;
            this.state = size === 0 ? "trailers" : "chunk-data";
          }
          break;
        }
        case "chunk-data": {
          const n = Math.min(this.remaining, data.length);
          this.parts.push(data.subarray(0, n));
          this.remaining -= n;
          data = data.subarray(n);
          if (this.remaining === 0) this.state = "chunk-end";
          break;
        }
        case "until-close":
          this.parts.push(data);
          data = data.subarray(data.length);
          break;
      }
    }
    // Bytes after a complete answer: the upstream is out of step, so the connection cannot be reused.
    if (data.length > 0) this.keepAlive = false;
    return this.state === "done";
  }

  /** The connection ended: completes an answer framed by the connection's end, else the answer was cut off. */
  end(): boolean {
    if (this.state === "until-close") {
      this.state = "done";
      return true;
    }
    return this.state === "done";
  }

  private readHead(head: string): void {
    const lines = head.split("\r\n");
    const statusLine = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0]);
    if (!statusLine) throw new UpstreamProtocolError("The upstream did not answer HTTP/1.x.");
    const status = Number(statusLine[2]);
    if (status >= 100 && status < 200) return; // informational: the real head follows
    this.status = status;
    let contentLength = -1;
    let chunked = false;
    let connection = statusLine[1] === "0" ? "close" : "keep-alive";
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i].indexOf(":");
      if (colon < 0) continue;
      const name = lines[i].slice(0, colon).trim().toLowerCase();
      const value = lines[i].slice(colon + 1).trim();
      if (name === "content-length") contentLength = Number(value);
      else if (name === "transfer-encoding") chunked = value.toLowerCase().split(",").pop()?.trim() === "chunked";
      else if (name === "connection") connection = value.toLowerCase();
    }
    this.keepAlive = connection.includes("keep-alive") || !connection.includes("close");
    if (status === 204 || status === 304) this.state = "done";
    else if (chunked) this.state = "chunk-size";
    else if (contentLength >= 0) {
      if (!Number.isSafeInteger(contentLength)) throw new UpstreamProtocolError("Bad content-length.");
      this.remaining = contentLength;
      this.state = contentLength === 0 ? "done" : "length";
    } else {
      this.state = "until-close";
      this.keepAlive = false;
    }
  }
}

interface Origin {
  connect: () => net.Socket;
  /** The request head up to the content-length value. */
  headPrefix: string;
  idle: net.Socket[];
  open: number;
  waiting: (() => void)[];
}

/**
 * Forwards JSON-RPC bodies to upstream nodes over kept-alive HTTP/1.1 connections, one request per
 * connection at a time. It writes the request as one prebuilt head plus the client's bytes and reads the
 * answer with AnswerParser. That is all a JSON-RPC hop needs: at one connection it adds about half of what
 * an undici Pool did (tests/bench/proxy.ts measures both).
 */
export class UpstreamClient {
  private readonly origins = new Map<string, Origin>();
  private readonly maxConnections: number;
  private readonly maxIdle: number;
  private readonly timeoutMs: number;
  private readonly idleTimeoutMs: number;
  private closed = false;

  constructor(options: { connections?: number; maxIdle?: number; timeoutMs?: number; idleTimeoutMs?: number } = {}) {
    this.maxConnections = options.connections ?? 128;
    this.maxIdle = options.maxIdle ?? 32;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 4_000;
  }

  private originFor(httpUrl: string): Origin {
    let origin = this.origins.get(httpUrl);
    if (!origin) {
      const url = new URL(httpUrl);
      const secure = url.protocol === "https:";
      if (!secure && url.protocol !== "http:") throw new Error(`Unsupported upstream protocol ${url.protocol}`);
      const port = Number(url.port || (secure ? 443 : 80));
      const host = url.hostname.replace(/^\[|\]$/g, "");
      const auth = url.username
        ? `authorization: Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}\r\n`
        : "";
      origin = {
        connect: secure
          ? () =>
              tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ["http/1.1"] })
          : () => net.connect({ host, port }),
        // The upstream URL's own path and query (a provider's key often lives there) are kept.
        headPrefix: `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${auth}content-type: application/json\r\ncontent-length: `,
        idle: [],
        open: 0,
        waiting: [],
      };
      this.origins.set(httpUrl, origin);
    }
    return origin;
  }

  /** POSTs a body and collects the answer. */
  async post(upstream: Upstream, body: Buffer | string): Promise<UpstreamAnswer> {
    if (this.closed) throw new Error("The upstream client is closed.");
    const origin = this.originFor(upstream.httpUrl);
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    const head = Buffer.from(`${origin.headPrefix}${bytes.length}\r\n\r\n`, "latin1");
    const { socket, reused } = await this.acquire(origin);
    try {
      return await this.exchange(origin, socket, head, bytes);
    } catch (error) {
      if (!(error instanceof StaleConnection)) throw error;
      // A kept-alive connection the upstream had already closed fails before any answer byte; the request
      // never reached the node, so it is sent once more on a new connection.
      if (reused) return this.exchange(origin, this.open(origin), head, bytes).catch(unwrapStale);
      throw error.cause;
    } finally {
      origin.waiting.shift()?.();
    }
  }

  /** An idle connection, else a new one, waiting while the origin has as many open as allowed. */
  private async acquire(origin: Origin): Promise<{ socket: net.Socket; reused: boolean }> {
    for (;;) {
      const socket = origin.idle.pop();
      if (socket && !socket.destroyed) return { socket, reused: true };
      if (socket) continue;
      if (origin.open < this.maxConnections) return { socket: this.open(origin), reused: false };
      await new Promise<void>((resolve) => origin.waiting.push(resolve));
    }
  }

  private open(origin: Origin): net.Socket {
    const socket = origin.connect();
    socket.setNoDelay(true);
    origin.open++;
    socket.once("close", () => {
      origin.open--;
      const at = origin.idle.indexOf(socket);
      if (at >= 0) origin.idle.splice(at, 1);
      origin.waiting.shift()?.();
    });
    return socket;
  }

  private exchange(origin: Origin, socket: net.Socket, head: Buffer, body: Buffer): Promise<UpstreamAnswer> {
    socket.ref();
    socket.removeAllListeners("timeout");
    socket.removeAllListeners("data");
    socket.removeAllListeners("error");
    socket.removeAllListeners("end");
    const parser = new AnswerParser();
    return new Promise<UpstreamAnswer>((resolve, reject) => {
      const fail = (error: Error) => {
        socket.destroy();
        reject(parser.started ? error : new StaleConnection(error));
      };
      socket.setTimeout(this.timeoutMs);
      socket.on("timeout", () => {
        socket.destroy();
        reject(new Error(`The upstream did not answer within ${this.timeoutMs} ms.`));
      });
      socket.on("error", fail);
      socket.on("end", () => {
        if (parser.end()) finish();
        else fail(new UpstreamProtocolError("The upstream closed the connection before its answer was complete."));
      });
      const finish = () => {
        resolve({ status: parser.status, body: parser.body() });
        this.release(origin, socket, parser.keepAlive);
      };
      socket.on("data", (chunk: Buffer) => {
        try {
          if (parser.feed(chunk)) finish();
        } catch (error) {
          fail(error as Error);
        }
      });
      socket.cork();
      socket.write(head);
      socket.write(body);
      socket.uncork();
    });
  }

  /** Keeps a connection for the next request, or closes it. */
  private release(origin: Origin, socket: net.Socket, keepAlive: boolean): void {
    socket.removeAllListeners("data");
    socket.removeAllListeners("end");
    socket.removeAllListeners("timeout");
    socket.removeAllListeners("error");
    if (!keepAlive || this.closed || socket.destroyed || origin.idle.length >= this.maxIdle) {
      socket.destroy();
      return;
    }
    // Idle: any byte or end from the upstream now means the connection is no longer usable.
    socket.on("data", () => socket.destroy());
    socket.on("end", () => socket.destroy());
    socket.on("error", () => socket.destroy());
    socket.setTimeout(this.idleTimeoutMs);
    socket.on("timeout", () => socket.destroy());
    socket.unref();
    origin.idle.push(socket);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const origin of this.origins.values()) {
      for (const socket of origin.idle) socket.destroy();
      origin.idle = [];
    }
    this.origins.clear();
  }
}

function unwrapStale(error: unknown): never {
  throw error instanceof StaleConnection ? error.cause : error;
}

/** A connection failed before any byte of its answer arrived. */
class StaleConnection extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}
