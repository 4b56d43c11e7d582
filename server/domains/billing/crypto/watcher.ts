import { NewHeads } from "../../../dataplane/chain/heads.ts";
import { RpcClient } from "../../../dataplane/datasets/rpc.ts";
import { type CryptoChargeDeps, watchChargesOnce } from "./service.ts";

interface WatcherLog {
  info(o: object, m?: string): void;
  warn(o: object, m?: string): void;
}

/** Longest wait between looks while heads are pushed: a charge's deadline is checked at least this often. */
const PUSHED_MAX_WAIT_MS = 15_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Follows the charges' network: a look at every open charge at each new head the node pushes (the
 * stream engine's and token index's `NewHeads`), every `pollMs` while it pushes none, and with back-off
 * while the node cannot be read. Every process serving the API runs one; what it does is read from and
 * written to the database, so a restart resumes and two processes confirm nothing twice (service.ts).
 */
export function startChargeWatcher(deps: CryptoChargeDeps, log: WatcherLog): { stop(): Promise<void> } {
  const { network, pollMs } = deps.settings;
  const upstream = deps.upstreams.get(network);
  if (!upstream || !deps.addressOf) {
    log.warn(
      { network },
      `crypto charges: not watched (${!upstream ? `${network} has no chain node` : "no deposit mnemonic configured"})`,
    );
    return { stop: async () => {} };
  }
  const rpc = new RpcClient(upstream.httpUrl, { connections: 1 });
  const heads = new NewHeads({ upstreams: deps.upstreams, log, pollMs });
  const watch = heads.watch(network);
  let stopped = false;
  let wake: (() => void) | null = null;
  let headMissed = false;
  const unlisten = watch.listen(() => {
    if (wake) wake();
    else headMissed = true;
  });
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopped || headMissed) return resolve();
      const timer = setTimeout(() => wake?.(), ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });
  const running = (async () => {
    let failures = 0;
    while (!stopped) {
      headMissed = false;
      try {
        for (const move of await watchChargesOnce(deps, rpc, watch.head())) {
          log.info(
            {
              chargeId: move.chargeId,
              accountId: move.accountId,
              invoiceId: move.invoiceId,
              from: move.from,
              to: move.to,
            },
            `crypto charge ${move.from} -> ${move.to}`,
          );
        }
        if (failures > 0) log.info({ network }, "crypto charges: reading the node again");
        failures = 0;
      } catch (error) {
        if (failures === 0)
          log.warn({ network, err: error }, "crypto charges: could not look at the charges; retrying");
        failures++;
      }
      const wait =
        failures > 0
          ? Math.min(MAX_BACKOFF_MS, pollMs * 2 ** failures)
          : watch.subscribed()
            ? PUSHED_MAX_WAIT_MS
            : pollMs;
      await pause(wait);
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await running;
      unlisten();
      watch.close();
      heads.close();
      await rpc.close();
    },
  };
}
