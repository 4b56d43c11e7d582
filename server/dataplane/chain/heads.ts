/**
 * New chain heads as the node pushes them: one WebSocket per network (eth_subscribe "newHeads"), shared
 * by everything that watches that network, so a stream at the chain tip learns of a block the moment the
 * node has it instead of at its next poll. Where the node offers no WebSocket, or the subscription is
 * refused or drops, watchers are told the push is gone and poll the node themselves; the connection is
 * tried again with back-off and, once subscribed, pushes resume.
 *
 * The connection is ours (the operator's node), not one a tenant names, so it does not go through egress.
 */
import { type RawData, WebSocket } from "ws";
import type { UpstreamMap } from "./nodes.ts";

/** First wait before connecting again after a failure; doubled per failure up to RECONNECT_MAX_MS. */
export const RECONNECT_FIRST_MS = 500;
export const RECONNECT_MAX_MS = 30_000;
/** A connection that has not subscribed within this long is given up (and tried again). */
const SUBSCRIBE_TIMEOUT_MS = 10_000;
/** A ping each interval; a connection that did not answer the previous one is taken for dead. */
const PING_INTERVAL_MS = 15_000;

/** One network's pushed heads, as a watcher sees them. */
export interface HeadWatch {
  /** The number of the last head pushed, or null while nothing is pushed (not subscribed, or none yet). */
  head(): number | null;
  /** Whether heads are pushed now (else the watcher polls). */
  subscribed(): boolean;
  /** Calls `listener` on every pushed head and whenever the subscription comes or goes; returns its removal. */
  listen(listener: () => void): () => void;
  /** Ends this watch (the last one of a network closes its connection). */
  close(): void;
}

export interface NewHeadsOptions {
  upstreams: UpstreamMap;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
  /** How often watchers poll without pushed heads (named in the fallback log line). */
  pollMs: number;
}

/** The newHeads subscription of one network, open while someone watches it. */
class HeadSubscription {
  private ws: WebSocket | null = null;
  private subscriptionId: string | null = null;
  private lastHead: number | null = null;
  private readonly listeners = new Set<() => void>();
  private watchers = 0;
  /** Connections in a row that failed or did not hold (see drop). */
  private failures = 0;
  private subscribedAt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Whether the current outage was logged (one line per outage, not per attempt). */
  private outageLogged = false;

  constructor(
    private readonly network: string,
    private readonly wsUrl: string | null,
    private readonly options: NewHeadsOptions,
    reportNoWebSocket: boolean,
  ) {
    if (wsUrl) this.connect();
    else if (reportNoWebSocket)
      options.log.warn(
        { network },
        `new heads of ${network}: its node has no WebSocket URL; streams at the tip poll it every ${options.pollMs} ms`,
      );
  }

  watch(): HeadWatch {
    this.watchers++;
    let open = true;
    const mine = new Set<() => void>();
    return {
      head: () => (this.subscriptionId ? this.lastHead : null),
      subscribed: () => this.subscriptionId !== null,
      listen: (listener) => {
        this.listeners.add(listener);
        mine.add(listener);
        return () => {
          this.listeners.delete(listener);
          mine.delete(listener);
        };
      },
      close: () => {
        if (!open) return;
        open = false;
        for (const l of mine) this.listeners.delete(l);
        this.watchers--;
      },
    };
  }

  get unwatched(): boolean {
    return this.watchers === 0;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private connect(): void {
    if (this.closed || !this.wsUrl) return;
    const ws = new WebSocket(this.wsUrl, { perMessageDeflate: false, handshakeTimeout: SUBSCRIBE_TIMEOUT_MS });
    this.ws = ws;
    let alive = true;
    const subscribeTimer = setTimeout(() => this.drop(ws, "no subscription within 10 s"), SUBSCRIBE_TIMEOUT_MS);
    subscribeTimer.unref();
    ws.on("open", () => {
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
      this.pingTimer = setInterval(() => {
        if (!alive) return this.drop(ws, `no answer to a ping within ${PING_INTERVAL_MS / 1000} s`);
        alive = false;
        ws.ping();
      }, PING_INTERVAL_MS);
      this.pingTimer.unref();
    });
    ws.on("pong", () => {
      alive = true;
    });
    ws.on("message", (data: RawData) => {
      let message: {
        id?: number;
        result?: unknown;
        error?: { message?: string };
        method?: string;
        params?: { subscription?: string; result?: { number?: string } };
      };
      try {
        message = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (message.id === 1) {
        clearTimeout(subscribeTimer);
        if (typeof message.result !== "string")
          return this.drop(ws, `eth_subscribe refused: ${message.error?.message ?? "no subscription id"}`);
        this.subscribed(message.result);
      } else if (message.method === "eth_subscription" && message.params?.subscription === this.subscriptionId) {
        const n = Number.parseInt(message.params?.result?.number ?? "", 16);
        if (Number.isNaN(n)) return;
        this.lastHead = n;
        this.notify();
      }
    });
    ws.on("error", (error) => this.drop(ws, error.message));
    ws.on("close", (code) => {
      clearTimeout(subscribeTimer);
      this.drop(ws, `connection closed (${code})`);
    });
  }

  private subscribed(id: string): void {
    this.subscriptionId = id;
    this.subscribedAt = performance.now();
    this.options.log.info(
      { network: this.network },
      this.outageLogged
        ? `new heads of ${this.network}: WebSocket subscription back; streams at the tip are woken by pushed heads again`
        : `new heads of ${this.network}: pushed by its node over WebSocket`,
    );
    this.outageLogged = false;
    this.notify();
  }

  /** Ends `ws` (when it is still the current connection): watchers fall back to polling; tried again later. */
  private drop(ws: WebSocket, reason: string): void {
    if (this.ws !== ws) return;
    this.ws = null;
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    ws.removeAllListeners();
    ws.on("error", () => {});
    ws.terminate();
    const wasSubscribed = this.subscriptionId !== null;
    // A subscription that held a while starts the back-off afresh; one dropped soon after it was made
    // counts as a failure, so a node that keeps accepting and dropping is not reconnected every 0.5 s.
    if (wasSubscribed && performance.now() - this.subscribedAt > RECONNECT_MAX_MS) this.failures = 0;
    this.subscriptionId = null;
    this.lastHead = null;
    if (this.closed) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** this.failures);
    this.failures++;
    if (!this.outageLogged) {
      this.outageLogged = true;
      this.options.log.warn(
        { network: this.network },
        `new heads of ${this.network}: WebSocket subscription unavailable (${reason}); streams at the tip poll the node every ${this.options.pollMs} ms until it is back (retrying with back-off)`,
      );
    }
    if (wasSubscribed) this.notify();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.ws) this.drop(this.ws, "closed");
    this.listeners.clear();
  }
}

/** The newHeads subscriptions of every watched network (see the file's comment). */
export class NewHeads {
  private readonly subscriptions = new Map<string, HeadSubscription>();
  /** Networks whose missing WebSocket URL was logged (once per process). */
  private readonly reportedWithoutWebSocket = new Set<string>();

  constructor(private readonly options: NewHeadsOptions) {}

  /** Watches `network`'s heads (opening its subscription if it is the first watch); close the watch when done. */
  watch(network: string): HeadWatch {
    let subscription = this.subscriptions.get(network);
    if (!subscription) {
      const wsUrl = this.options.upstreams.get(network)?.wsUrl ?? null;
      const report = !wsUrl && !this.reportedWithoutWebSocket.has(network);
      if (report) this.reportedWithoutWebSocket.add(network);
      subscription = new HeadSubscription(network, wsUrl, this.options, report);
      this.subscriptions.set(network, subscription);
    }
    const watch = subscription.watch();
    const owner = subscription;
    return {
      ...watch,
      close: () => {
        watch.close();
        if (owner.unwatched && this.subscriptions.get(network) === owner) {
          this.subscriptions.delete(network);
          owner.close();
        }
      },
    };
  }

  close(): void {
    for (const s of this.subscriptions.values()) s.close();
    this.subscriptions.clear();
  }
}
