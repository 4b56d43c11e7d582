/**
 * An archive-mode anvil beside a local (pruned) node, kept on the same chain by replaying it: each block of
 * the served node is mined again on the archive node with the same signed transactions, in the same order,
 * at the same timestamp, from the same genesis, so it is the same block (same hash). The served node keeps
 * the state of its last KEPT_STATES blocks; the archive node keeps every block's, and the proxy sends an
 * Archive add-on's calls at older blocks there (docs/decisions/1561-archive-node.md).
 */
import { RpcClient } from "../datasets/rpc.ts";
import { KEPT_STATES } from "./anvil.ts";

/** Where the proxy sends calls at blocks older than the served node keeps. */
export interface ArchiveRoute {
  httpUrl: string;
  /**
   * Calls at a block below this number go to the archive node: the oldest block the served node still
   * keeps, once the archive node has replayed up to it; undefined while it has not (or stopped following).
   */
  routesBelow(): number | undefined;
  /** The newest block the archive node has replayed (it has that block's state); undefined as routesBelow. */
  replayedTo(): number | undefined;
}

interface BlockHead {
  number: string;
  hash: string;
  timestamp: string;
  transactions: string[];
}

/** Blocks replayed per round (one batch of block reads, one of raw transactions, then a mine call each). */
const BLOCKS_PER_ROUND = 200;

export class ArchiveFollower implements ArchiveRoute {
  private readonly served: RpcClient;
  private readonly archive: RpcClient;
  private replayed = -1;
  private servedHead = -1;
  /** Set when the archive node cannot follow (a transaction it cannot replay, a block that came out different). */
  private broken = false;
  /** Set while a round has found the archive node on another chain than the served one and not yet rolled it back. */
  private diverged = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    servedUrl: string,
    readonly httpUrl: string,
    private readonly options: { pollMs: number; log: (message: string) => void },
  ) {
    this.served = new RpcClient(servedUrl);
    this.archive = new RpcClient(httpUrl);
  }

  routesBelow(): number | undefined {
    if (this.broken || this.diverged || this.servedHead < 0) return undefined;
    const oldestKept = Math.max(0, this.servedHead - KEPT_STATES + 1);
    // Blocks it has not replayed yet are not sent there.
    return Math.min(oldestKept, this.replayed + 1);
  }

  replayedTo(): number | undefined {
    return this.broken || this.diverged || this.replayed < 0 ? undefined : this.replayed;
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.follow()
        .catch((error) => this.options.log(`the archive node did not follow this round: ${(error as Error).message}`))
        .finally(() => {
          this.running = null;
          if (!this.stopped && !this.broken) this.timer = setTimeout(tick, this.options.pollMs);
        });
    };
    tick();
  }

  /** Replays what the served node mined since the last round; rolls back first what a reorg replaced. */
  async follow(): Promise<void> {
    const [servedHead, archiveHead] = await Promise.all([
      this.served.call<string>("eth_blockNumber"),
      this.archive.call<string>("eth_blockNumber"),
    ]);
    const served = Number(servedHead);
    const archived = Number(archiveHead);
    // The chains compared at the newest block both have before the new heads are published: after a reorg
    // deeper than the served node's window, calls at blocks of the old fork would otherwise go to the archive
    // node for as long as the rollback below walks down to the fork point. Nothing goes there until it is done.
    const top = Math.min(served, archived);
    this.diverged = top > 0 && !(await this.sameBlock(top));
    this.servedHead = served;
    this.replayed = archived;
    await this.rollBackReplaced(this.diverged ? top : null);
    this.diverged = false;
    while (!this.stopped && !this.broken && this.replayed < this.servedHead) {
      const last = Math.min(this.servedHead, this.replayed + BLOCKS_PER_ROUND);
      await this.replay(this.replayed + 1, last);
    }
  }

  /** Whether both nodes have the same block `n` (or neither has it). */
  private async sameBlock(n: number): Promise<boolean> {
    const [mine, theirs] = await Promise.all([
      this.archive.call<BlockHead | null>("eth_getBlockByNumber", [hex(n), false]),
      this.served.call<BlockHead | null>("eth_getBlockByNumber", [hex(n), false]),
    ]);
    return mine?.hash === theirs?.hash;
  }

  /**
   * A reorg on the served node: blocks of the archive node the served one no longer has are rolled back.
   * `differsAt` is the newest block both have when follow() found it different (null: the same there).
   */
  private async rollBackReplaced(differsAt: number | null): Promise<void> {
    let depth = 0;
    if (differsAt !== null) {
      depth = this.replayed - differsAt + 1;
      for (let n = differsAt - 1; n > 0; n--) {
        if (await this.sameBlock(n)) break;
        depth = this.replayed - n + 1;
      }
    }
    // Blocks above the served node's head were replaced by a shorter chain.
    depth = Math.max(depth, this.replayed - this.servedHead);
    if (depth === 0) return;
    await this.archive.call("anvil_rollback", [depth]);
    this.replayed -= depth;
    this.options.log(`the archive node rolled back ${depth} blocks after a reorg`);
  }

  private async replay(first: number, last: number): Promise<void> {
    const numbers = Array.from({ length: last - first + 1 }, (_, i) => first + i);
    const blocks = (await this.served.batch(
      numbers.map((n) => ({ method: "eth_getBlockByNumber", params: [hex(n), false] })),
    )) as (BlockHead | null)[];
    const hashes = blocks.flatMap((b) => b?.transactions ?? []);
    const raws = (await this.served.batch(
      hashes.map((h) => ({ method: "eth_getRawTransactionByHash", params: [h] })),
    )) as (string | null)[];
    const rawOf = new Map(hashes.map((h, i) => [h, raws[i]]));
    for (const block of blocks) {
      if (!block || this.stopped) return;
      const txs = block.transactions.map((h) => rawOf.get(h));
      if (txs.some((raw) => !raw))
        return this.stopFollowing(`block ${Number(block.number)} has a transaction without its signed form`);
      if (txs.length > 0)
        await this.archive.batch(txs.map((raw) => ({ method: "eth_sendRawTransaction", params: [raw] })));
      await this.archive.call("evm_mine", [{ timestamp: Number(block.timestamp), blocks: 1 }]);
      const mined = await this.archive.call<BlockHead | null>("eth_getBlockByNumber", [block.number, false]);
      if (mined?.hash !== block.hash)
        return this.stopFollowing(`block ${Number(block.number)} came out different on the archive node`);
      this.replayed = Number(block.number);
    }
  }

  private stopFollowing(reason: string): void {
    this.broken = true;
    this.options.log(`the archive node stops following (${reason}): calls at old blocks get the served node's answer`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await Promise.all([this.served.close(), this.archive.close()]);
  }
}

const hex = (n: number) => `0x${n.toString(16)}`;
