/**
 * The token index: transfer logs read from a network's node with eth_getLogs in ranges, decoded, and
 * written with their effects (balances, holdings) through the TokenIndexStore, up to the chain tip and
 * then at every new head (pushed by the node's newHeads subscription, the head source the stream engine
 * uses; polled when the node pushes none).
 *
 * Reorg safety: every range is read against the cursor it continues. The range's last block hash is
 * read first, then the logs, then the last block's hash again (a change means the chain moved under the
 * read: the range is read again) with the cursor block's hash (a mismatch is a reorg). On a reorg the
 * fork point is the newest stored checkpoint whose hash the node still has; everything after it is undone
 * in one transaction and read again. Transfers and checkpoints are kept only for the last
 * REORG_WINDOW_BLOCKS blocks (what a reorg may replace); without a checkpoint there, the network is read
 * again from the start. docs/decisions/1550-token-index.md says why.
 */
import type { HeadWatch, NewHeads } from "../chain/heads.ts";
import type { UpstreamMap } from "../chain/nodes.ts";
import { RpcClient } from "../datasets/rpc.ts";
import { addEffects, addLogEffects, type LogEffects, noEffects, type RawLog, TRANSFER_TOPICS_FILTER } from "./logs.ts";
import { readTokenMetadata } from "./metadata.ts";
import type { IndexCursor, TokenIndexStore, TokenMetadata } from "./store.ts";

export interface TokenIndexerOptions {
  store: TokenIndexStore;
  upstreams: UpstreamMap;
  /** The networks indexed (each from `startBlock`). */
  networks: readonly string[];
  /** Pushed heads; without it (or while a network's push is down) the node is polled every `pollMs`. */
  heads?: NewHeads;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
  pollMs?: number;
  startBlock?: number;
  /** Most blocks in one eth_getLogs (default 2,000). */
  maxRangeBlocks?: number;
  /** Logs one range aims at: a range that returned more is halved, one with a quarter of it doubled (default 5,000). */
  targetLogs?: number;
  /** Told of every range written (progress, for metrics and the tests that follow it). */
  onRange?: (range: { network: string; from: number; to: number; transfers: number }) => void;
}

const DEFAULT_POLL_MS = 2000;
/**
 * Blocks behind the head a reorg may replace: their transfers and range ends are kept to undo them. A
 * deeper reorg (none on the chains served; Ethereum finalizes in 64–95 blocks) re-reads the network.
 */
export const REORG_WINDOW_BLOCKS = 1024;
const MAX_BACKOFF_MS = 30_000;
/** Ranges read and waiting to be written, at most (each holds its logs); the writer writes those ready as one. */
const READ_AHEAD = 4;
/** Checkpoints compared with the node per round trip when looking for a fork point. */
const FORK_SEARCH_BATCH = 32;

interface BlockHeader {
  hash: string;
}

type RangeRead =
  /** Its logs decoded as soon as read, into what they change: the logs themselves are not kept. */
  | { kind: "range"; from: number; end: IndexCursor; effects: LogEffects }
  /** The cursor block is no longer on the node's chain. */
  | { kind: "reorg" }
  /** The chain moved while the range was read: read it again. */
  | { kind: "moved" };

const hex = (n: number) => `0x${n.toString(16)}`;
const getBlock = (n: number) => ({ method: "eth_getBlockByNumber", params: [hex(n), false] });

export class TokenIndexer {
  private readonly clients = new Map<string, RpcClient>();
  private readonly rangeBlocks = new Map<string, number>();
  private readonly known = new Map<string, Set<string>>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly catchingUp = new Map<string, Promise<void>>();
  private readonly wakers = new Map<string, () => void>();
  /** Networks whose node pushed a head (or changed its push) while no wait was listening: look again at once. */
  private readonly headsMissed = new Set<string>();
  private readonly watches = new Map<string, HeadWatch>();
  private stopped = false;
  private readonly pollMs: number;
  private readonly startBlock: number;
  private readonly maxRangeBlocks: number;
  private readonly targetLogs: number;

  constructor(private readonly options: TokenIndexerOptions) {
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.startBlock = options.startBlock ?? 0;
    this.maxRangeBlocks = options.maxRangeBlocks ?? 2000;
    this.targetLogs = options.targetLogs ?? 5000;
  }

  /** Follows every network in the background until stop(). */
  start(): void {
    for (const network of this.options.networks) {
      if (this.running.has(network)) continue;
      this.running.set(network, this.follow(network));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.wakers.values()) wake();
    await Promise.allSettled([...this.running.values()]);
    await Promise.allSettled([...this.catchingUp.values()]);
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
    await Promise.all([...this.clients.values()].map((c) => c.close()));
    this.clients.clear();
  }

  /**
   * Indexes `network` up to the node's current head (undoing a reorg first when there was one); resolves
   * when the index holds the chain as the node had it. One at a time per network: a second call waits for
   * the first and then runs.
   */
  catchUp(network: string): Promise<void> {
    const previous = this.catchingUp.get(network) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.catchUpNow(network));
    this.catchingUp.set(network, next);
    return next;
  }

  private async follow(network: string): Promise<void> {
    const watch = this.options.heads?.watch(network) ?? null;
    if (watch) this.watches.set(network, watch);
    // Listened to for as long as the network is followed: a head pushed during a catch-up (the wait below
    // not yet listening) is remembered, not lost until the next poll.
    const unlisten = watch?.listen(() => this.wake(network));
    let failures = 0;
    let outageLogged = false;
    while (!this.stopped) {
      this.headsMissed.delete(network);
      try {
        await this.catchUp(network);
        if (outageLogged)
          this.options.log.info({ network }, `token index of ${network}: reading the node again, caught up`);
        failures = 0;
        outageLogged = false;
      } catch (error) {
        failures++;
        if (!outageLogged) {
          outageLogged = true;
          this.options.log.warn(
            { network, err: error },
            `token index of ${network}: could not read the node; retrying`,
          );
        }
      }
      const waitMs = failures > 0 ? Math.min(MAX_BACKOFF_MS, this.pollMs * 2 ** failures) : this.pollMs;
      await this.nextHead(network, failures > 0 || !watch?.subscribed() ? waitMs : MAX_BACKOFF_MS);
    }
    unlisten?.();
  }

  private wake(network: string): void {
    const waker = this.wakers.get(network);
    if (waker) waker();
    else this.headsMissed.add(network);
  }

  /** Resolves at the next pushed head (or a change of the push; at once if one came since the catch-up began), at stop(), or after `ms`. */
  private nextHead(network: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped || this.headsMissed.delete(network)) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(network);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.set(network, done);
    });
  }

  private client(network: string): RpcClient {
    let client = this.clients.get(network);
    if (!client) {
      const upstream = this.options.upstreams.get(network);
      if (!upstream) throw new Error(`no node serves ${network}`);
      // Three: a range's request, the checks of the range before it and a batch of new tokens' metadata at once.
      client = new RpcClient(upstream.httpUrl, { connections: 3 });
      this.clients.set(network, client);
    }
    return client;
  }

  private async head(network: string, rpc: RpcClient): Promise<number> {
    const pushed = this.watches.get(network)?.head() ?? null;
    return pushed ?? Number.parseInt(await rpc.call<string>("eth_blockNumber"), 16);
  }

  private async catchUpNow(network: string): Promise<void> {
    const rpc = this.client(network);
    /** The cursor this call wrote last, checked against the node after its logs: no need to look it up again. */
    let reached: IndexCursor | null = null;
    for (;;) {
      if (this.stopped) return;
      // The stored cursor and the node's head, read at once.
      const [cursor, head] = await Promise.all([
        reached ?? this.options.store.cursor(network),
        this.head(network, rpc),
      ]);
      if (reached && reached.block >= head) return;
      reached = null;
      if (cursor && cursor.block >= head) {
        const header = await rpc.call<BlockHeader | null>("eth_getBlockByNumber", [hex(cursor.block), false]);
        if (header?.hash === cursor.hash) return;
        await this.rollBackFork(network, rpc, cursor);
        continue;
      }
      const outcome = await this.indexRanges(network, rpc, cursor, head);
      if (outcome.kind === "reorg") await this.rollBackFork(network, rpc, outcome.cursor);
      else reached = outcome.reached;
    }
  }

  /**
   * Reads and writes ranges from `cursor` to `head`: the reader (readRanges) runs ahead of the writer, at
   * most READ_AHEAD ranges read and waiting, and the writer writes every range already read as one: their
   * effects summed, the last one's end the new cursor. A writer slower than the reader so writes fewer,
   * larger ranges instead of falling behind. Stops at a reorg (answering the cursor it found orphaned),
   * when the chain moved under a read or another indexer moved the cursor (the caller looks again), or at
   * `head`.
   */
  private async indexRanges(
    network: string,
    rpc: RpcClient,
    cursor: IndexCursor | null,
    head: number,
  ): Promise<{ kind: "done"; reached: IndexCursor | null } | { kind: "reorg"; cursor: IndexCursor }> {
    const queue = new ReadQueue();
    const reading = this.readRanges(network, rpc, cursor, head, queue).then(
      () => queue.end(),
      (error) => queue.fail(error),
    );
    try {
      return await this.writeRanges(network, rpc, cursor, head, queue);
    } finally {
      queue.close();
      await reading;
    }
  }

  private async writeRanges(
    network: string,
    rpc: RpcClient,
    cursor: IndexCursor | null,
    head: number,
    queue: ReadQueue,
  ): Promise<{ kind: "done"; reached: IndexCursor | null } | { kind: "reorg"; cursor: IndexCursor }> {
    let parent = cursor;
    for (let read = await queue.next(); read; read = await queue.next()) {
      if (read.kind === "moved" || this.stopped) return { kind: "done", reached: null };
      if (read.kind === "reorg") return parent ? { kind: "reorg", cursor: parent } : { kind: "done", reached: null };
      const ranges = [read, ...queue.readyRanges()];
      const transfers = ranges.map((r) => r.effects.transfers);
      const effects = read.effects;
      for (const later of ranges.slice(1)) addEffects(effects, later.effects);
      const end = ranges[ranges.length - 1].end;
      const newTokens = await this.newTokenMetadata(network, rpc, effects.tokens);
      const written = await this.options.store.commitRange({
        network,
        parent,
        end,
        keepFrom: head - REORG_WINDOW_BLOCKS + 1,
        effects,
        newTokens,
      });
      if (!written) {
        // The cursor moved elsewhere (another indexer, or a database that lost its last unflushed ranges):
        // the tokens this process remembers as stored are looked up again.
        this.known.delete(network);
        return { kind: "done", reached: null };
      }
      const known = this.knownTokens(network);
      for (const t of newTokens) known.add(t.address);
      ranges.forEach((r, i) => {
        this.options.onRange?.({ network, from: r.from, to: r.end.block, transfers: transfers[i] });
      });
      parent = end;
    }
    return { kind: "done", reached: parent };
  }

  private rangeEnd(network: string, from: number, head: number): number {
    return Math.min(head, from + (this.rangeBlocks.get(network) ?? this.maxRangeBlocks) - 1);
  }

  private adaptRange(network: string, logs: number, blocks: number): void {
    const size = this.rangeBlocks.get(network) ?? this.maxRangeBlocks;
    if (logs > this.targetLogs) this.rangeBlocks.set(network, Math.max(1, Math.floor(Math.min(size, blocks) / 2)));
    else if (logs < this.targetLogs / 4 && blocks >= size)
      this.rangeBlocks.set(network, Math.min(this.maxRangeBlocks, size * 2));
  }

  /**
   * Reads the ranges from `cursor` to `head` into `queue`, checked, in order. A range's request is one
   * JSON-RPC batch: its logs and the end of the range after it (read before that range's logs). As soon as
   * its answer has arrived, before it is parsed and decoded, two requests go out at once: the next range's,
   * and this range's checks (its end again: unchanged, its logs are of the chain it ends; its parent: the
   * range continues the cursor). So the node reads the next range while this process works on this one,
   * and a range goes to the writer as soon as it is decoded. A reorg that replaced the parent replaced the
   * end too, so whichever the node answers first, a fork shows as one mismatch or the other.
   */
  private async readRanges(
    network: string,
    rpc: RpcClient,
    cursor: IndexCursor | null,
    head: number,
    queue: ReadQueue,
  ): Promise<void> {
    const from = cursor ? cursor.block + 1 : this.startBlock;
    const to = this.rangeEnd(network, from, head);
    const end = await rpc.call<BlockHeader | null>("eth_getBlockByNumber", [hex(to), false]);
    if (!end) return queue.push({ kind: "moved" });
    /** The range whose logs the request in flight reads, with its end's hash read before them. */
    let reading: RangeToRead & { hash: string } = { from, to, hash: end.hash, parent: cursor };
    /** The end of the range after `reading`, read by the request in flight. */
    let nextTo = to < head ? this.rangeEnd(network, to + 1, head) : null;
    let request = this.sendRead(rpc, reading, nextTo);
    for (;;) {
      const parse = await request;
      await queue.room();
      if (queue.closed || this.stopped) return;
      const following: RangeToRead | null =
        nextTo === null
          ? null
          : { from: reading.to + 1, to: nextTo, hash: null, parent: { block: reading.to, hash: reading.hash } };
      const followingTo = following && following.to < head ? this.rangeEnd(network, following.to + 1, head) : null;
      // The checks go out first: anvil answered them only after a range's logs asked for before them.
      const checked = this.checkRange(rpc, reading);
      checked.catch(() => undefined);
      const next = following ? this.sendRead(rpc, following, followingTo) : null;
      // Met where it is awaited, next round; dropped when this round ends the reading.
      next?.catch(() => undefined);
      const answer = parse();
      if (following) following.hash = answer.nextHeader?.hash ?? null;
      this.adaptRange(network, answer.logs.length, reading.to - reading.from + 1);
      const effects = noEffects();
      addLogEffects(effects, answer.logs);
      const verdict = await checked;
      if (verdict) return queue.push(verdict);
      queue.push({ kind: "range", from: reading.from, end: { block: reading.to, hash: reading.hash }, effects });
      // The writer, woken by the range just pushed, sends its write before this process parses the next
      // answer: the database writes while the next logs are parsed and decoded.
      await new Promise(setImmediate);
      // Done: the last range, or one whose end the node did not have (a shorter chain now: the caller
      // looks at the chain again).
      if (!following?.hash || !next) return;
      reading = { ...following, hash: following.hash };
      nextTo = followingTo;
      request = next;
    }
  }

  /** A range's request (see readRanges): its logs and the end block `nextTo`; resolves when its answer has arrived, with the function that parses it. */
  private async sendRead(
    rpc: RpcClient,
    range: RangeToRead,
    nextTo: number | null,
  ): Promise<() => { logs: RawLog[]; nextHeader: BlockHeader | null }> {
    const parse = await rpc.batchArrived([
      {
        method: "eth_getLogs",
        params: [{ fromBlock: hex(range.from), toBlock: hex(range.to), topics: TRANSFER_TOPICS_FILTER }],
      },
      ...(nextTo === null ? [] : [getBlock(nextTo)]),
    ]);
    return () => {
      const [logs, nextHeader] = parse();
      if (logs instanceof Error) throw logs;
      if (nextHeader instanceof Error) throw nextHeader;
      return { logs: logs as RawLog[], nextHeader: (nextHeader ?? null) as BlockHeader | null };
    };
  }

  /** The checks of `range` after its logs: null when they pass, else what they found. */
  private async checkRange(rpc: RpcClient, range: RangeToRead & { hash: string }): Promise<RangeRead | null> {
    const [endAgain, parent] = (await rpc.batchSettled([
      getBlock(range.to),
      ...(range.parent ? [getBlock(range.parent.block)] : []),
    ])) as (BlockHeader | null | Error)[];
    if (endAgain instanceof Error) throw endAgain;
    if (parent instanceof Error) throw parent;
    if (endAgain?.hash !== range.hash) return { kind: "moved" };
    if (range.parent && parent?.hash !== range.parent.hash) return { kind: "reorg" };
    return null;
  }

  private knownTokens(network: string): Set<string> {
    let known = this.known.get(network);
    if (!known) {
      known = new Set();
      this.known.set(network, known);
    }
    return known;
  }

  /** Metadata of the tokens seen (`tokens`) that the store does not have yet (read from the contracts). */
  private async newTokenMetadata(
    network: string,
    rpc: RpcClient,
    tokens: LogEffects["tokens"],
  ): Promise<(TokenMetadata & { firstBlock: number })[]> {
    if (tokens.size === 0) return [];
    let known = this.known.get(network);
    if (!known) {
      known = new Set(await this.options.store.knownTokens(network));
      this.known.set(network, known);
    }
    const fresh = [...tokens].filter(([address]) => !known.has(address));
    const metadata = await readTokenMetadata(
      rpc,
      fresh.map(([address, { standard }]) => ({ address, standard })),
    );
    return metadata.map((m, i) => ({ ...m, firstBlock: fresh[i][1].firstBlock }));
  }

  /**
   * Finds the fork point below `orphaned` (the newest checkpoint whose hash the node still has; none: the
   * whole network is read again) and undoes everything after it.
   */
  private async rollBackFork(network: string, rpc: RpcClient, orphaned: IndexCursor): Promise<void> {
    let below = orphaned.block;
    let ancestor: IndexCursor | null = null;
    for (;;) {
      const candidates = await this.options.store.checkpoints(network, below, FORK_SEARCH_BATCH);
      if (candidates.length === 0) break;
      const headers = await rpc.batchSettled(
        candidates.map((c) => ({ method: "eth_getBlockByNumber", params: [hex(c.block), false] })),
      );
      const match = candidates.find((c, i) => {
        const header = headers[i];
        return !(header instanceof Error) && (header as BlockHeader | null)?.hash === c.hash;
      });
      if (match) {
        ancestor = match;
        break;
      }
      below = candidates[candidates.length - 1].block;
    }
    const done = await this.options.store.rollBack(network, ancestor, orphaned);
    // The tokens a rollback forgot are read again when they show up.
    this.known.delete(network);
    if (done)
      this.options.log.info(
        { network, from: (ancestor?.block ?? -1) + 1, to: orphaned.block },
        `token index of ${network}: reorg; undid blocks ${(ancestor?.block ?? -1) + 1}–${orphaned.block} and reads them again`,
      );
  }
}

/** A range to read: its blocks, its end's hash read before its logs (null: not known yet, or the node did not have that block), and the cursor it continues. */
interface RangeToRead {
  from: number;
  to: number;
  hash: string | null;
  parent: IndexCursor | null;
}

/**
 * The ranges read and checked, in order, between the reader and the writer: the reader waits while
 * READ_AHEAD of them wait (each holds its effects), and stops once the writer has closed the queue.
 */
class ReadQueue {
  private readonly items: RangeRead[] = [];
  private ended = false;
  private failure: { error: unknown } | null = null;
  private wakeWriter: (() => void) | null = null;
  private wakeReader: (() => void) | null = null;
  /** The writer takes no more (it stopped at a reorg, a moved cursor, an error or stop()). */
  closed = false;

  push(read: RangeRead): void {
    this.items.push(read);
    this.wake();
  }

  /** The reader is done (after the ranges pushed). */
  end(): void {
    this.ended = true;
    this.wake();
  }

  /** The reader failed: the writer meets `error` after the ranges pushed before it. */
  fail(error: unknown): void {
    this.failure = { error };
    this.end();
  }

  close(): void {
    this.closed = true;
    this.wakeReader?.();
  }

  /** Resolves when the reader may read one more range (or the queue is closed). */
  async room(): Promise<void> {
    while (!this.closed && this.items.length >= READ_AHEAD) {
      await new Promise<void>((resolve) => {
        this.wakeReader = resolve;
      });
      this.wakeReader = null;
    }
  }

  /** The next read, waiting for it; null when the reader is done. */
  async next(): Promise<RangeRead | null> {
    while (this.items.length === 0 && !this.ended) {
      await new Promise<void>((resolve) => {
        this.wakeWriter = resolve;
      });
      this.wakeWriter = null;
    }
    const read = this.items.shift();
    if (read) {
      this.wakeReader?.();
      return read;
    }
    if (this.failure) throw this.failure.error;
    return null;
  }

  /** The ranges read and waiting right now, up to the first that is not a range (left for next()). */
  readyRanges(): Extract<RangeRead, { kind: "range" }>[] {
    const ready: Extract<RangeRead, { kind: "range" }>[] = [];
    for (let read = this.items[0]; read?.kind === "range"; read = this.items[0]) {
      ready.push(read);
      this.items.shift();
    }
    if (ready.length > 0) this.wakeReader?.();
    return ready;
  }

  private wake(): void {
    this.wakeWriter?.();
  }
}
