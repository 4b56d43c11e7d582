import net from "node:net";
import tls from "node:tls";
import type { EgressPolicy } from "../../platform/egress.ts";
import { decodePercent } from "../../platform/text.ts";

export interface PostAnswer {
  status: number;
  body: Buffer;
}

/** The server broke HTTP/1.1 (or closed mid-answer); the connection is not reused. */
export class HttpProtocolError extends Error {}

/** No whole answer within the client's timeout. `status` is the answer's, when its head had arrived (else 0). */
export class AnswerTimeout extends Error {
  constructor(
    readonly timeoutMs: number,
    readonly status: number,
  ) {
    super(`The server did not answer within ${timeoutMs} ms.`);
  }
}

const CRLF = Buffer.from("\r\n");
const EMPTY = Buffer.alloc(0);
const HEAD_END = Buffer.from("\r\n\r\n");
const MAX_HEAD_BYTES = 64 * 1024;
/**
 * A request body up to this size is sent in one buffer with its head (see PostClient.request): copying
 * it costs less than a corked write of two buffers; a larger one is written beside its head, uncopied.
 */
const ONE_WRITE_MAX_BYTES = 64 * 1024;

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})/;
/** The length of "connection", the shortest header name AnswerParser reads. */
const SHORTEST_READ_NAME = 10;

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
  private pending: Buffer = EMPTY;
  private remaining = 0;
  private readonly parts: Buffer[] = [];
  /** Whether any byte of an answer has arrived (so a failure may no longer be retried). */
  started = false;

  body(): Buffer {
    return this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
  }

  /** Where `delimiter` starts in `data`; -1 when it has not arrived yet, `data` then kept for the next chunk. */
  private find(data: Buffer, delimiter: Buffer, tooLong: string): number {
    const at = data.indexOf(delimiter);
    if (at < 0) {
      if (data.length > MAX_HEAD_BYTES) throw new HttpProtocolError(tooLong);
      this.pending = data;
    }
    return at;
  }

  /** Feeds bytes; returns true once the answer is complete. Throws HttpProtocolError on bad framing. */
  feed(chunk: Buffer): boolean {
    this.started = true;
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = EMPTY;
    while (data.length > 0 && this.state !== "done") {
      switch (this.state) {
        case "head": {
          const end = this.find(data, HEAD_END, "The server's answer head is too large.");
          if (end < 0) return false;
          this.readHead(data.toString("latin1", 0, end));
          data = data.subarray(end + 4);
          break;
        }
        case "length":
        case "chunk-data": {
          const n = Math.min(this.remaining, data.length);
          this.parts.push(data.subarray(0, n));
          this.remaining -= n;
          data = data.subarray(n);
          if (this.remaining === 0) this.state = this.state === "length" ? "done" : "chunk-end";
          break;
        }
        case "chunk-size":
        case "chunk-end":
        case "trailers": {
          const eol = this.find(data, CRLF, "A chunk line is too long.");
          if (eol < 0) return false;
          const line = data.toString("latin1", 0, eol);
          data = data.subarray(eol + 2);
          if (this.state === "chunk-end") {
            if (line !== "") throw new HttpProtocolError("A chunk does not end with CRLF.");
            this.state = "chunk-size";
          } else if (this.state === "trailers") {
            if (line === "") this.state = "done";
          } else {
            const size = Number.parseInt(line.split(";")[0].trim(), 16);
            if (!Number.isFinite(size) || size < 0) throw new HttpProtocolError("A chunk size is not hexadecimal.");
            this.remaining = size;
            this.state = size === 0 ? "trailers" : "chunk-data";
          }
          break;
        }
        case "until-close":
          this.parts.push(data);
          data = data.subarray(data.length);
          break;
      }
    }
    // Bytes after a complete answer: the server is out of step, so the connection cannot be reused.
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
    const statusLine = STATUS_LINE.exec(head);
    if (!statusLine) throw new HttpProtocolError("The server did not answer HTTP/1.x.");
    const status = Number(statusLine[2]);
    if (status >= 100 && status < 200) return; // informational: the real head follows
    this.status = status;
    let contentLength = -1;
    let chunked = false;
    let connection = statusLine[1] === "0" ? "close" : "keep-alive";
    // Line by line in place: only three headers matter, and a name shorter than the shortest of them
    // (spaces around a name only lengthen it) is passed over without being cut out.
    let start = head.indexOf("\r\n");
    while (start >= 0) {
      start += 2;
      const lineEnd = head.indexOf("\r\n", start);
      const end = lineEnd < 0 ? head.length : lineEnd;
      const colon = head.indexOf(":", start);
      if (colon >= 0 && colon < end && colon - start >= SHORTEST_READ_NAME) {
        const name = head.slice(start, colon).trim().toLowerCase();
        if (name === "content-length" || name === "transfer-encoding" || name === "connection") {
          const value = head.slice(colon + 1, end).trim();
          if (name === "content-length") contentLength = Number(value);
          else if (name === "transfer-encoding") chunked = value.toLowerCase().split(",").pop()?.trim() === "chunked";
          else connection = value.toLowerCase();
        }
      }
      start = lineEnd;
    }
    this.keepAlive = connection.includes("keep-alive") || !connection.includes("close");
    if (status === 204 || status === 304) this.state = "done";
    else if (chunked) this.state = "chunk-size";
    else if (contentLength >= 0) {
      if (!Number.isSafeInteger(contentLength)) throw new HttpProtocolError("Bad content-length.");
      this.remaining = contentLength;
      this.state = contentLength === 0 ? "done" : "length";
    } else {
      this.state = "until-close";
      this.keepAlive = false;
    }
  }
}

/** Takes each chunk of bytes a connection receives, its own to keep. */
type Reader = (chunk: Buffer) => void;

/**
 * Where plain connections read (net's `onread`): each chunk is copied out of it at once, which costs less
 * than the Readable stream's work per 'data' event on the proxy's path. One buffer for every connection,
 * since the copy is made in the read's own callback.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

export interface Origin {
  /** Opens a connection whose received bytes go to `reader`. */
  connect: (reader: Reader) => net.Socket;
  /** The request head up to the content-length value. */
  headPrefix: string;
  idle: Connection[];
  /** Every open connection, busy or idle (the timeout sweep walks them). */
  open: Set<Connection>;
  waiting: (() => void)[];
}

interface Exchange {
  parser: AnswerParser;
  resolve: (answer: PostAnswer) => void;
  reject: (error: Error) => void;
  /** performance.now() after which the answer is overdue. */
  deadline: number;
}

/**
 * One kept-alive connection. Its listeners are attached once and hand events to the exchange in
 * progress, so a request costs no listener or timer churn; timeouts are found by the client's sweep.
 */
class Connection {
  exchange: Exchange | null = null;
  idleSince = 0;
  readonly socket: net.Socket;

  constructor(
    readonly origin: Origin,
    private readonly release: (connection: Connection, keepAlive: boolean) => void,
  ) {
    this.socket = origin.connect((chunk) => {
      const exchange = this.exchange;
      if (!exchange) {
        // Bytes while idle: the server is out of step, so the connection cannot be reused.
        this.socket.destroy();
        return;
      }
      try {
        if (exchange.parser.feed(chunk)) this.finish(exchange);
      } catch (error) {
        this.fail(error as Error);
      }
    });
    this.socket.setNoDelay(true);
    this.socket.on("end", () => {
      const exchange = this.exchange;
      if (exchange?.parser.end()) this.finish(exchange);
      else if (exchange)
        this.fail(new HttpProtocolError("The server closed the connection before its answer was complete."));
      else this.socket.destroy();
    });
    this.socket.on("error", (error) => this.fail(error));
    this.socket.on("close", () => {
      if (this.exchange) this.fail(new HttpProtocolError("The server closed the connection."));
      origin.open.delete(this);
      const at = origin.idle.indexOf(this);
      if (at >= 0) origin.idle.splice(at, 1);
      origin.waiting.shift()?.();
    });
    origin.open.add(this);
  }

  /** Writes a request (its head and body, or `body` null when `head` holds the whole request). */
  send(head: Buffer, body: Buffer | null, timeoutMs: number): Promise<PostAnswer> {
    return new Promise<PostAnswer>((resolve, reject) => {
      this.exchange = { parser: new AnswerParser(), resolve, reject, deadline: performance.now() + timeoutMs };
      this.socket.ref();
      if (body === null) {
        this.socket.write(head);
        return;
      }
      this.socket.cork();
      this.socket.write(head);
      this.socket.write(body);
      this.socket.uncork();
    });
  }

  /** Fails the exchange in progress; before any answer byte the request never reached the server (StaleConnection). */
  fail(error: Error): void {
    const exchange = this.exchange;
    this.exchange = null;
    this.socket.destroy();
    if (exchange) exchange.reject(exchange.parser.started ? error : new StaleConnection(error));
  }

  timeOut(timeoutMs: number): void {
    const exchange = this.exchange;
    this.exchange = null;
    this.socket.destroy();
    exchange?.reject(new AnswerTimeout(timeoutMs, exchange.parser.status));
  }

  private finish(exchange: Exchange): void {
    this.exchange = null;
    exchange.resolve({ status: exchange.parser.status, body: exchange.parser.body() });
    this.release(this, exchange.parser.keepAlive);
  }
}

/** A POST's bytes: its head (the whole request when `body` is null) and body, for one origin. */
export class PostRequest {
  constructor(
    readonly origin: Origin,
    readonly head: Buffer,
    readonly body: Buffer | null,
  ) {}
}

/**
 * POSTs bodies over kept-alive HTTP/1.1 connections, one request per connection at a time: the RPC
 * proxy's hop to upstream nodes and webhook deliveries. It writes the request as one prebuilt head (plus
 * the caller's extra header lines) and the body, and reads the answer with AnswerParser. That is all
 * either needs, and it costs less per request than an undici Pool (tests/bench/proxy.ts measures the
 * proxy against a plain node:http + undici one; tests/bench/streams.ts the engine).
 */
export class PostClient {
  private readonly origins = new Map<string, Origin>();
  private readonly maxConnections: number;
  private readonly maxIdle: number;
  private readonly timeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly ca: string | Buffer | undefined;
  private readonly egress: EgressPolicy | undefined;
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  constructor(
    options: {
      connections?: number;
      maxIdle?: number;
      timeoutMs?: number;
      idleTimeoutMs?: number;
      /** Certificate authorities trusted for https servers instead of the system's (a private node). */
      ca?: string | Buffer;
      /**
       * Where a tenant names the URL (webhooks): every connection is checked by the egress policy, on
       * the address connected to. The proxy's upstreams are the operator's and go without one.
       */
      egress?: EgressPolicy;
    } = {},
  ) {
    this.ca = options.ca;
    this.egress = options.egress;
    this.maxConnections = options.connections ?? 128;
    this.maxIdle = options.maxIdle ?? 32;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 4_000;
    this.sweep = setInterval(() => this.expire(), Math.min(1000, this.timeoutMs / 4, this.idleTimeoutMs / 4));
    this.sweep.unref();
  }

  private originFor(httpUrl: string): Origin {
    let origin = this.origins.get(httpUrl);
    if (!origin) {
      const url = new URL(httpUrl);
      const secure = url.protocol === "https:";
      if (!secure && url.protocol !== "http:") throw new Error(`Unsupported protocol ${url.protocol}`);
      const port = Number(url.port || (secure ? 443 : 80));
      const host = url.hostname.replace(/^\[|\]$/g, "");
      const auth = url.username
        ? `authorization: Basic ${Buffer.from(`${decodePercent(url.username)}:${decodePercent(url.password)}`).toString("base64")}\r\n`
        : "";
      origin = {
        connect: this.connector(secure, host, port, url),
        // The URL's own path and query (a provider's key often lives there) are kept.
        headPrefix: `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${auth}content-type: application/json\r\ncontent-length: `,
        idle: [],
        open: new Set(),
        waiting: [],
      };
      this.origins.set(httpUrl, origin);
    }
    return origin;
  }

  /**
   * How an origin's connections are made: through the egress policy when the client has one, except to
   * the service's own route the policy allows (an origin here is one URL, so its connections carry
   * requests to that path only).
   */
  private connector(secure: boolean, host: string, port: number, url: URL): (reader: Reader) => net.Socket {
    const egress = this.egress?.isOwnRoute(url) ? undefined : this.egress;
    const reading = (socket: net.Socket, reader: Reader) => socket.on("data", reader);
    if (secure) {
      const options = {
        host,
        port,
        servername: net.isIP(host) ? undefined : host,
        ALPNProtocols: ["http/1.1"],
        ca: this.ca,
      };
      return egress
        ? (reader) => reading(egress.tlsConnect(options), reader)
        : (reader) => reading(tls.connect(options), reader);
    }
    if (egress) return (reader) => reading(egress.connect({ host, port }), reader);
    return (reader) =>
      net.connect({
        host,
        port,
        onread: {
          buffer: READ_BUFFER,
          callback: (length, buffer) => {
            reader(Buffer.from(buffer.subarray(0, length)));
            return true;
          },
        },
      });
  }

  /**
   * POSTs a JSON body to `url` and collects the answer. `headerLines` are extra header lines, each
   * ending in CRLF, written as given: the caller checks their names and values, which must be ASCII
   * (a text body is encoded with its head as one UTF-8 buffer and written in one piece).
   */
  post(url: string, body: Buffer | string, headerLines = ""): Promise<PostAnswer> {
    return this.send(this.request(url, body, headerLines));
  }

  /** The bytes of a POST, made before its turn to be sent (see {@link send}); arguments as {@link post}'s. */
  request(url: string, body: Buffer | string, headerLines = ""): PostRequest {
    const origin = this.originFor(url);
    if (typeof body === "string") {
      const whole = Buffer.from(`${origin.headPrefix}${Buffer.byteLength(body)}\r\n${headerLines}\r\n${body}`);
      return new PostRequest(origin, whole, null);
    }
    const head = `${origin.headPrefix}${body.length}\r\n${headerLines}\r\n`;
    if (body.length > ONE_WRITE_MAX_BYTES) return new PostRequest(origin, Buffer.from(head, "latin1"), body);
    // A small body is copied behind its head: one write instead of a corked pair (Node's writev path).
    const whole = Buffer.allocUnsafe(head.length + body.length);
    whole.write(head, 0, "latin1");
    body.copy(whole, head.length);
    return new PostRequest(origin, whole, null);
  }

  /**
   * Sends a request made by {@link request} and collects the answer. On an idle connection the request
   * is written before this returns, so a caller can do its own work while it is out (see the stream
   * runner), not before it.
   */
  send(request: PostRequest): Promise<PostAnswer> {
    if (this.closed) return Promise.reject(new Error("The HTTP client is closed."));
    const idle = this.idleConnection(request.origin);
    if (idle) return this.exchange(request, idle, true);
    return this.acquire(request.origin).then(({ connection, reused }) => this.exchange(request, connection, reused));
  }

  private async exchange(request: PostRequest, connection: Connection, reused: boolean): Promise<PostAnswer> {
    const { origin, head, body: bytes } = request;
    try {
      return await connection.send(head, bytes, this.timeoutMs);
    } catch (error) {
      if (!(error instanceof StaleConnection)) throw error;
      // A kept-alive connection the server had already closed fails before any answer byte; the request
      // never reached the server, so it is sent once more on a new connection.
      if (reused) return this.connect(origin).send(head, bytes, this.timeoutMs).catch(unwrapStale);
      throw error.cause;
    } finally {
      origin.waiting.shift()?.();
    }
  }

  /** An idle connection, else a new one, waiting while the origin has as many open as allowed. */
  private async acquire(origin: Origin): Promise<{ connection: Connection; reused: boolean }> {
    for (;;) {
      const connection = this.idleConnection(origin);
      if (connection) return { connection, reused: true };
      if (origin.open.size < this.maxConnections) return { connection: this.connect(origin), reused: false };
      await new Promise<void>((resolve) => origin.waiting.push(resolve));
    }
  }

  /** The last connection kept idle that is still open, if any (closed ones are dropped). */
  private idleConnection(origin: Origin): Connection | null {
    for (;;) {
      const connection = origin.idle.pop();
      if (!connection) return null;
      if (!connection.socket.destroyed) return connection;
    }
  }

  private connect(origin: Origin): Connection {
    return new Connection(origin, (connection, keepAlive) => this.release(connection, keepAlive));
  }

  /** Keeps a connection for the next request, or closes it. */
  private release(connection: Connection, keepAlive: boolean): void {
    const { origin, socket } = connection;
    if (!keepAlive || this.closed || socket.destroyed || origin.idle.length >= this.maxIdle) {
      socket.destroy();
      return;
    }
    connection.idleSince = performance.now();
    socket.unref();
    origin.idle.push(connection);
  }

  /** The timeout sweep: overdue answers fail, connections idle too long close. */
  private expire(): void {
    const now = performance.now();
    for (const origin of this.origins.values()) {
      for (const connection of origin.open) {
        if (connection.exchange) {
          if (now > connection.exchange.deadline) connection.timeOut(this.timeoutMs);
        } else if (now - connection.idleSince > this.idleTimeoutMs) connection.socket.destroy();
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    for (const origin of this.origins.values()) {
      for (const connection of origin.idle) connection.socket.destroy();
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
