// A served anvil node and an archive-mode one beside it from the same genesis, as the service runs them for
// the Archive add-on (server/dataplane/chain/archive.ts), for the tests of the archive follower.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";

export interface ArchivePair {
  served: AnvilNode;
  archive: AnvilNode;
  servedRpc: RpcClient;
  archiveRpc: RpcClient;
  stop(): Promise<void>;
}

export async function startArchivePair(name: string): Promise<ArchivePair> {
  const served = await startAnvil({ chainId: 31337 });
  const servedRpc = new RpcClient(served.httpUrl);
  const genesis = await servedRpc.call<{ timestamp: string }>("eth_getBlockByNumber", ["0x0", false]);
  const archive = await startAnvil({
    chainId: 31337,
    archive: { genesisTimestamp: Number(genesis.timestamp), statesDir: join(tmpdir(), `${name}-${process.pid}`) },
  });
  const archiveRpc = new RpcClient(archive.httpUrl);
  return {
    served,
    archive,
    servedRpc,
    archiveRpc,
    async stop() {
      await Promise.all([servedRpc.close(), archiveRpc.close()]);
      await Promise.all([served.stop(), archive.stop()]);
    },
  };
}

export const hashAt = async (rpc: RpcClient, n: number) =>
  (await rpc.call<{ hash: string } | null>("eth_getBlockByNumber", [`0x${n.toString(16)}`, false]))?.hash;

/**
 * Pays `to` from the node's first account and returns the block the payment was mined in. Anvil answers
 * eth_sendTransaction before its automine has mined the block (under load, eth_blockNumber still said the
 * block before), so it waits for the receipt.
 */
export async function payAndWait(rpc: RpcClient, to: string, value: string): Promise<number> {
  const [from] = await rpc.call<string[]>("eth_accounts");
  const hash = await rpc.call<string>("eth_sendTransaction", [{ from, to, value }]);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const receipt = await rpc.call<{ blockNumber: string } | null>("eth_getTransactionReceipt", [hash]);
    if (receipt) return Number(receipt.blockNumber);
    if (Date.now() > deadline) throw new Error(`the payment ${hash} was not mined`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
