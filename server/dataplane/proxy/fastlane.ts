import { type IncomingHttpHeaders, type Server, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { Server as TlsServer } from "node:tls";
import type { DataPlane, RouteTarget, RpcRequest, RpcResponse } from "./plane.ts";

/**
 * The RPC fast lane. A JSON-RPC POST is read straight off the socket and answered in one write, without
 * node:http's request and response objects: on the benchmark machine the lane took 0.05–0.06 ms off each
 * call, over a third of what the proxy added (tests/bench/proxy.ts). Only plain requests take the lane:
 * `POST` over HTTP/1.1 to an RPC target (an /rpc path or a domain mask), with one Content-Length within
 * the body limit, no Transfer-Encoding, Expect or Upgrade, a Host, and nothing unusual in the head. Anything else (the
 * console, WebSocket upgrades, OPTIONS, chunked bodies, HTTP/1.0, a head the lane does not read to the
 * letter) is handed to node:http at a request boundary, with the bytes not yet answered, and the
 * connection stays there. Both sides agree on where each request ends because the lane consumes only
 * requests it read whole under these rules.
 */

const MAX_HEAD_BYTES = 16 * 1024;
const MAX_HEADERS = 100;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/;
const REQUEST_LINE = /^POST (\/[!-~]*) HTTP\/1\.1$/;
const HEAD_END = Buffer.from("\r\n\r\n");
const EMPTY = Buffer.alloc(0);

/** Whether a header value holds a control character other than tab (node:http refuses those too). */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 32 && code !== 9) || code === 127) return true;
  }
  return false;
}

type RpcHead = {
  kind: "rpc";
  url: string;
  headers: IncomingHttpHeaders;
  bodyStart: number;
  bodyLength: number;
  close: boolean;
};
export type ParsedHead = { kind: "incomplete" } | { kind: "other" } | RpcHead;

/**
 * Reads the head of the request at the start of `buffer` under the lane's rules: "incomplete" when more
 * bytes are needed to tell, "other" for anything that belongs to node:http.
 */
export function parseHead(buffer: Buffer, maxBody: number): ParsedHead {
  const end = buffer.indexOf(HEAD_END);
  if (end < 0)
    return buffer.length > MAX_HEAD_BYTES || !couldBePost(buffer) ? { kind: "other" } : { kind: "incomplete" };
  if (end > MAX_HEAD_BYTES) return { kind: "other" };
  const lines = buffer.toString("latin1", 0, end).split("\r\n");
  if (lines.length - 1 > MAX_HEADERS) return { kind: "other" };
  const request = REQUEST_LINE.exec(lines[0]);
  if (!request) return { kind: "other" };
  // No prototype: a header may be called "constructor" or "__proto__".
  const headers: IncomingHttpHeaders = Object.create(null);
  for (let i = 1; i < lines.length; i++) {
    const header = HEADER_LINE.exec(lines[i]);
    if (!header || hasControlCharacter(header[2])) return { kind: "other" };
    const name = header[1].toLowerCase();
    if (name in headers) return { kind: "other" };
    headers[name] = header[2];
  }
  if (headers["transfer-encoding"] !== undefined || headers.expect !== undefined || headers.upgrade !== undefined)
    return { kind: "other" };
  const length = headers["content-length"];
  if (!headers.host || typeof length !== "string" || !/^\d{1,9}$/.test(length)) return { kind: "other" };
  const bodyLength = Number(length);
  if (bodyLength > maxBody) return { kind: "other" };
  const connection = headers.connection?.toLowerCase();
  if (connection !== undefined && connection !== "keep-alive" && connection !== "close") return { kind: "other" };
  // Frozen: a connection's next request with the same head bytes is given these same headers (LaneConnection).
  Object.freeze(headers);
  return { kind: "rpc", url: request[1], headers, bodyStart: end + 4, bodyLength, close: connection === "close" };
}

/** Whether the bytes so far may still become a POST head (anything else goes to node:http at once). */
function couldBePost(buffer: Buffer): boolean {
  const start = buffer.toString("latin1", 0, Math.min(buffer.length, 5));
  return "POST ".startsWith(start);
}

/** The Date header, made once a second (as node:http does). */
let dateHeader = "";
let dateSecond = 0;
function date(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateHeader = new Date(second * 1000).toUTCString();
  }
  return dateHeader;
}

/** A request the lane read whole; the proxy reads it as it reads node's IncomingMessage. */
class LaneRequest implements RpcRequest {
  readonly method = "POST";
  constructor(
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    readonly body: Buffer,
    readonly socket: Socket,
  ) {}
  resume(): void {}
  on(): this {
    return this;
  }
  destroy(): void {
    this.socket.destroy();
  }
}

/** An answer written in one piece: status line, headers and body. */
class LaneResponse implements RpcResponse {
  headersSent = false;
  private head = "";

  constructor(
    private readonly connection: LaneConnection,
    private readonly close: boolean,
  ) {}

  writeHead(status: number, headers: Record<string, string | number>): void {
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Unknown"}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    this.head = `${head}date: ${date()}\r\nconnection: ${this.close ? "close" : "keep-alive"}\r\n\r\n`;
    this.headersSent = true;
  }

  end(body?: string | Buffer): void {
    if (!this.headersSent) this.writeHead(200, { "content-length": 0 });
    // Head and body written into one buffer (the head is latin1: a byte a character), with no copy between.
    const head = this.head;
    const bodyLength = body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body) : body.length;
    const bytes = Buffer.allocUnsafe(head.length + bodyLength);
    bytes.write(head, 0, "latin1");
    if (typeof body === "string") bytes.write(body, head.length, "utf8");
    else body?.copy(bytes, head.length);
    this.connection.answered(bytes, this.close);
  }

  destroy(): void {
    this.connection.socket.destroy();
  }
}

interface LaneOptions {
  plane: DataPlane;
  /** How long an idle kept-alive connection stays open. */
  keepAliveMs: number;
  /** The longest a request may take to arrive whole, from its first byte (node:http's requestTimeout). */
  requestTimeoutMs: number;
  targetOf(req: { url: string; headers: IncomingHttpHeaders }): RouteTarget | undefined;
  handOver(socket: Socket): void;
}

/** One client connection while it is in the lane: requests one at a time, in order. */
class LaneConnection {
  private buffered: Buffer = EMPTY;
  private busy = false;
  /** Closed, handed over, or closing after the answer in hand: no further request is read. */
  private done = false;
  /** When the first byte of the request now in the buffer arrived. */
  private requestStarted = 0;
  /** When a byte last came in or an answer went out (the idle sweep of attachFastLane reads it). */
  lastActive = Date.now();
  /**
   * The last head read for the lane, as received and as read: a kept-alive client mostly sends the same
   * head again byte for byte (same path, headers and body length), and comparing the bytes costs a
   * fraction of reading them (parseHead was the largest part of the lane's own time per call).
   */
  private lastHeadBytes: Buffer = EMPTY;
  private lastHead: RpcHead | null = null;

  constructor(
    readonly socket: Socket,
    private readonly options: LaneOptions,
    private readonly open: OpenConnections,
  ) {
    socket.setNoDelay(true);
    socket.on("data", this.onData);
    socket.on("error", this.onError);
    socket.on("close", this.onClose);
    open.add(this);
  }

  private readonly onData = (chunk: Buffer) => {
    const now = Date.now();
    this.lastActive = now;
    if (this.buffered.length === 0) this.requestStarted = now;
    else if (now - this.requestStarted > this.options.requestTimeoutMs) {
      // A request trickled in too slowly (as node:http's requestTimeout would end it).
      this.socket.destroy();
      return;
    }
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    if (!this.busy) this.next();
  };

  private readonly onError = () => {
    this.socket.destroy();
  };

  private readonly onClose = () => {
    this.done = true;
    this.open.delete(this);
  };

  /** Answers the complete requests in the buffer, one at a time; hands the rest over when one is not for the lane. */
  private next(): void {
    while (!this.busy && !this.done && this.buffered.length > 0) {
      const head = this.readHead();
      if (head.kind === "incomplete") return;
      const target = head.kind === "rpc" ? this.options.targetOf({ url: head.url, headers: head.headers }) : undefined;
      if (head.kind === "other" || !target) {
        this.handOver();
        return;
      }
      const bodyEnd = head.bodyStart + head.bodyLength;
      if (this.buffered.length < bodyEnd) return;
      const body = this.buffered.subarray(head.bodyStart, bodyEnd);
      this.buffered = bodyEnd === this.buffered.length ? EMPTY : this.buffered.subarray(bodyEnd);
      this.busy = true;
      const request = new LaneRequest(head.url, head.headers, body, this.socket);
      void this.options.plane.handleHttp(request, new LaneResponse(this, head.close), target);
    }
  }

  /** The head of the request at the start of the buffer: the last one again when its bytes are the same. */
  private readHead(): ParsedHead {
    const known = this.lastHeadBytes;
    const buffered = this.buffered;
    if (
      this.lastHead !== null &&
      buffered.length >= known.length &&
      buffered.compare(known, 0, known.length, 0, known.length) === 0
    )
      return this.lastHead;
    const head = parseHead(buffered, this.options.plane.maxBodyBytes);
    if (head.kind === "rpc") {
      this.lastHeadBytes = Buffer.from(buffered.subarray(0, head.bodyStart));
      this.lastHead = head;
    }
    return head;
  }

  /** The answer to the request in hand: written in one piece; then the next request, or the end. */
  answered(bytes: Buffer, close: boolean): void {
    if (this.socket.destroyed) return;
    if (close || this.done) {
      this.done = true;
      this.socket.end(bytes);
      return;
    }
    this.requestStarted = Date.now();
    this.lastActive = this.requestStarted;
    if (this.socket.write(bytes)) {
      this.busy = false;
      this.next();
    } else {
      // A client that sends calls faster than it reads answers waits until it has read them.
      this.socket.once("drain", () => {
        this.busy = false;
        this.next();
      });
    }
  }

  /** node:http takes the connection from here, with the bytes not yet answered. */
  private handOver(): void {
    this.done = true;
    this.open.delete(this);
    this.socket.removeListener("data", this.onData);
    this.socket.removeListener("error", this.onError);
    this.socket.removeListener("close", this.onClose);
    this.socket.pause();
    if (this.buffered.length) this.socket.unshift(this.buffered);
    this.buffered = EMPTY;
    this.options.handOver(this.socket);
  }

  /** Closes the connection now if it is idle, else after the answer in hand. */
  shutDown(): void {
    if (!this.busy) this.socket.destroy();
    else this.done = true;
  }
}

/**
 * The lane's open connections, and the one timer that closes those idle longer than the keep-alive time:
 * a socket timeout per connection is re-armed at every read and write (Node's _unrefTimer), on each call.
 * The timer runs while a connection is open.
 */
class OpenConnections {
  private readonly connections = new Set<LaneConnection>();
  private sweep: NodeJS.Timeout | null = null;

  constructor(private readonly keepAliveMs: number) {}

  add(connection: LaneConnection): void {
    this.connections.add(connection);
    if (this.sweep) return;
    this.sweep = setInterval(this.closeIdle, Math.min(1000, this.keepAliveMs / 4));
    this.sweep.unref();
  }

  delete(connection: LaneConnection): void {
    this.connections.delete(connection);
    if (this.connections.size > 0 || !this.sweep) return;
    clearInterval(this.sweep);
    this.sweep = null;
  }

  [Symbol.iterator](): IterableIterator<LaneConnection> {
    return this.connections.values();
  }

  private readonly closeIdle = () => {
    const now = Date.now();
    for (const connection of this.connections)
      if (now - connection.lastActive > this.keepAliveMs) connection.socket.destroy();
  };
}

/**
 * Puts the fast lane in front of an HTTP server: every new connection starts in the lane, and node:http
 * (the server's own connection listeners) gets it at its first request that is not for the lane.
 * Returns a function that closes the lane's connections (the server waits for them when it closes).
 */
export function attachFastLane(server: Server, options: Omit<LaneOptions, "handOver">): { closeConnections(): void } {
  // A TLS server's connections carry encrypted bytes until its own listener wraps them: no lane there.
  if (server instanceof TlsServer) return { closeConnections() {} };
  const nodeListeners = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  const open = new OpenConnections(options.keepAliveMs);
  const handOver = (socket: Socket) => {
    for (const listener of nodeListeners) listener.call(server, socket);
    socket.resume();
  };
  server.on("connection", (socket: Socket) => new LaneConnection(socket, { ...options, handOver }, open));
  return {
    closeConnections() {
      for (const connection of open) connection.shutDown();
    },
  };
}
