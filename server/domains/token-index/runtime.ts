import { NewHeads } from "../../dataplane/chain/heads.ts";
import type { ChainNodes } from "../../dataplane/chain/nodes.ts";
import { TokenIndexer } from "../../dataplane/token-index/indexer.ts";
import { type TokenMethod, tokenMethods } from "../../dataplane/token-index/methods.ts";
import type { Db } from "../../platform/db/index.ts";
import { databaseTokenIndexStore } from "./index-store.ts";

/** The token index as a process runs it: its methods (any process answers from the database), and maybe its indexer. */
export interface TokenIndexRuntime {
  /** The token add-on methods by name, for the proxy's add-on gating to serve. */
  methods: ReadonlyMap<string, TokenMethod>;
  /** Starts indexing (once the service listens: not needed to answer, and kept off a start's path). */
  startIndexing(): void;
  stop(): Promise<void>;
}

/** How often a network whose node pushes no heads is polled for new blocks. */
const INDEX_POLL_MS = 2000;

/**
 * Makes the methods and, in a process that runs the engine role (`index`), the indexer of every network
 * served by a local node (a configured upstream is a real chain: indexing it from block 0 is not for this
 * service's database). Its own newHeads watch per network: the stream engine usually runs in a child
 * process, whose subscription this process cannot share.
 */
export function startTokenIndex(deps: {
  db: Db;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
  upstreams: ChainNodes;
  index: boolean;
}): TokenIndexRuntime {
  const store = databaseTokenIndexStore(deps.db.$client);
  const networks = deps.upstreams
    .list()
    .filter((u) => u.source === "local")
    .map((u) => u.network);
  if (!deps.index || networks.length === 0)
    return { methods: tokenMethods(store), startIndexing: () => {}, stop: async () => {} };
  const heads = new NewHeads({ upstreams: deps.upstreams, log: deps.log, pollMs: INDEX_POLL_MS });
  const indexer = new TokenIndexer({
    store,
    upstreams: deps.upstreams,
    networks,
    heads,
    log: deps.log,
    pollMs: INDEX_POLL_MS,
  });
  return {
    methods: tokenMethods(store),
    startIndexing: () => indexer.start(),
    async stop() {
      await indexer.stop();
      heads.close();
    },
  };
}
