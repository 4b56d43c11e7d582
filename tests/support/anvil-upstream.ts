import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";

/** An anvil node serving `network` as the service's only upstream, with no local chains started. */
export interface AnvilUpstream {
  node: AnvilNode;
  /** Stops the node and removes the networks file (the environment is restored per file: env-per-file.ts). */
  close(): Promise<void>;
}

/**
 * Starts the node and points the environment at it. Set before the service starts: startChainNodes reads
 * the process environment (the config does not carry the networks file), and a service process started
 * from this one inherits it.
 */
export async function startAnvilUpstream(network = "ethereum-sepolia", chainId = 11155111): Promise<AnvilUpstream> {
  const node = await startAnvil({ chainId });
  const dir = mkdtempSync(join(tmpdir(), "nodeplane-networks-"));
  const file = join(dir, "networks.json");
  writeFileSync(
    file,
    JSON.stringify({ local: { networks: [] }, upstreams: { [network]: { http: node.httpUrl, ws: node.wsUrl } } }),
  );
  process.env.NODEPLANE_NETWORKS_CONFIG = file;
  process.env.NODEPLANE_LOCAL_CHAIN = "0";
  return {
    node,
    close: async () => {
      await node.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
