import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { stopLeftBehind } from "../../platform/service-lock.ts";
import { type AnvilNode, STATE_STOP_MS, startAnvil } from "./anvil.ts";
import { ArchiveFollower, type ArchiveRoute } from "./archive.ts";

/** Where one network's traffic goes. */
export interface Upstream {
  network: string;
  chainId: number | null;
  httpUrl: string;
  /** null when the upstream has no WebSocket: WebSocket clients then get a clear error. */
  wsUrl: string | null;
  source: "upstream" | "local";
  /** The archive-mode node beside a local node (the Archive add-on's), when one was started. */
  archive?: ArchiveRoute;
}

/** The read side the proxy uses: the upstream of a network, or undefined when none is configured. */
export interface UpstreamMap {
  get(network: string): Upstream | undefined;
}

export interface ChainNodes extends UpstreamMap {
  list(): Upstream[];
  stop(): Promise<void>;
}

export interface CatalogueNetwork {
  value: string;
  chain: string;
  chainCompatibility: string;
  chainId: number | null;
}

export interface NetworksFile {
  local?: { networks?: string[] | "*"; blockTimeSeconds?: number };
  upstreams?: Record<string, { http?: string; ws?: string }>;
}

export function loadCatalogueNetworks(rootDir: string): CatalogueNetwork[] {
  const file = JSON.parse(readFileSync(path.join(rootDir, "schemas/catalogue/networks.json"), "utf8")) as {
    chains: { chain: string; chainCompatibility: string; networks: { value: string; chainId: number | null }[] }[];
  };
  return file.chains.flatMap((c) =>
    c.networks.map((n) => ({
      value: n.value,
      chain: c.chain,
      chainCompatibility: c.chainCompatibility,
      chainId: n.chainId,
    })),
  );
}

/** Replaces ${VAR} with the environment's value; a missing variable makes the whole value missing. */
function expand(value: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (!value) return null;
  let missing = false;
  const out = value.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => {
    const v = env[name];
    if (!v) missing = true;
    return v ?? "";
  });
  return missing || !out ? null : out;
}

export interface NetworkPlan {
  upstreams: Upstream[];
  local: { network: string; chainId: number }[];
  blockTimeSeconds: number;
}

/** Decides, without starting anything, which networks use a configured upstream and which get a local anvil. */
export function planNetworks(file: NetworksFile, catalogue: CatalogueNetwork[], env: NodeJS.ProcessEnv): NetworkPlan {
  const byValue = new Map(catalogue.map((n) => [n.value, n]));
  const upstreams: Upstream[] = [];
  for (const [network, urls] of Object.entries(file.upstreams ?? {})) {
    const known = byValue.get(network);
    if (!known) throw new Error(`config/networks: upstream for unknown network "${network}"`);
    const httpUrl = expand(urls.http, env);
    if (!httpUrl) continue;
    upstreams.push({ network, chainId: known.chainId, httpUrl, wsUrl: expand(urls.ws, env), source: "upstream" });
  }
  const configured = new Set(upstreams.map((u) => u.network));
  const wanted = file.local?.networks ?? [];
  const localNames =
    wanted === "*" ? catalogue.filter((n) => n.chainCompatibility === "evm").map((n) => n.value) : wanted;
  const local: { network: string; chainId: number }[] = [];
  for (const network of localNames) {
    const known = byValue.get(network);
    if (!known) throw new Error(`config/networks: local node for unknown network "${network}"`);
    if (known.chainCompatibility !== "evm" || known.chainId === null)
      throw new Error(`config/networks: "${network}" is not an EVM network; anvil cannot serve it`);
    if (!configured.has(network)) local.push({ network, chainId: known.chainId });
  }
  return { upstreams, local, blockTimeSeconds: file.local?.blockTimeSeconds ?? 2 };
}

export function readNetworksFile(rootDir: string, env: NodeJS.ProcessEnv): NetworksFile {
  const file = env.NODEPLANE_NETWORKS_CONFIG ?? path.join(rootDir, "config/networks.json");
  return JSON.parse(readFileSync(file, "utf8")) as NetworksFile;
}

/** A fixed map, for configured upstreams only (tests, or a proxy process that starts no nodes). */
export function staticUpstreams(upstreams: Upstream[]): ChainNodes {
  const map = new Map(upstreams.map((u) => [u.network, u]));
  return { get: (n) => map.get(n), list: () => [...map.values()], stop: async () => {} };
}

/**
 * Whether local anvil nodes start: yes, unless NODEPLANE_LOCAL_CHAIN=0; under NODE_ENV=test only with
 * NODEPLANE_LOCAL_CHAIN=1 (tests that need a chain start their own anvil and name it in a networks file).
 */
export function localChainWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.NODEPLANE_LOCAL_CHAIN === "0") return false;
  if (env.NODE_ENV === "test") return env.NODEPLANE_LOCAL_CHAIN === "1";
  return true;
}

/**
 * Starts one local node on its state file. A file anvil cannot load (cut short by a crash, written by an
 * incompatible version) is set aside under a new name, kept for inspection, and the chain starts afresh:
 * a service that does not start is worse than a chain that starts again at block 0.
 */
async function startLocalNode(
  options: { chainId: number; blockTimeSeconds: number },
  statePath: string | undefined,
  log: (message: string) => void,
): Promise<AnvilNode> {
  if (!statePath) return startAnvil(options);
  mkdirSync(path.dirname(statePath), { recursive: true });
  await stopOrphanedNode(statePath, log);
  let node: AnvilNode;
  try {
    node = await startAnvil({ ...options, statePath });
  } catch (error) {
    if (!existsSync(statePath)) throw error;
    const setAside = `${statePath}.unreadable-${Date.now()}`;
    renameSync(statePath, setAside);
    log(`its state file could not be loaded (${(error as Error).message}); moved to ${setAside}, starting afresh`);
    node = await startAnvil({ ...options, statePath });
  }
  const pidFile = `${statePath}.pid`;
  writeFileSync(pidFile, String(node.pid));
  return {
    ...node,
    async stop() {
      await node.stop();
      rmSync(pidFile, { force: true });
    },
  };
}

/**
 * A node left running on this state file by a service that was killed would go on mining and saving its
 * own chain into the file the new node loads: it is stopped first, with SIGTERM so that it saves its
 * state, as a service's stop does. Only a process that is anvil on this very file is touched.
 */
async function stopOrphanedNode(statePath: string, log: (message: string) => void): Promise<void> {
  let pid: number;
  let args: string[];
  try {
    pid = Number(readFileSync(`${statePath}.pid`, "utf8"));
    args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return;
  }
  if (!args[0]?.endsWith("anvil") || !args.includes(statePath)) return;
  await stopLeftBehind(pid, {
    what: `The chain node on ${statePath}`,
    signal: "SIGTERM",
    waitMs: STATE_STOP_MS,
    killAfterWait: true,
    announce: () => log(`stopping a chain node a previous run left behind (pid ${pid})`),
  });
}

/**
 * Starts a local anvil per local network (in parallel) and returns the upstream of every network.
 * Call `stop()` on shutdown; a process `exit` handler also kills the nodes if the service dies first.
 */
export async function startChainNodes(
  config: { rootDir: string },
  options: {
    env?: NodeJS.ProcessEnv;
    log?: (message: string) => void;
    startLocal?: boolean;
    /** Where local nodes keep their chains (one file per network), so blocks survive a restart. */
    stateDir?: string;
    /** Whether each local node gets an archive-mode node beside it (chain/archive.ts). */
    archiveNodes?: boolean;
  } = {},
): Promise<ChainNodes> {
  const env = options.env ?? process.env;
  const plan = planNetworks(readNetworksFile(config.rootDir, env), loadCatalogueNetworks(config.rootDir), env);
  const nodes: AnvilNode[] = [];
  const killAll = () => {
    for (const n of nodes) {
      try {
        process.kill(n.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  };
  process.once("exit", killAll);
  const followers: ArchiveFollower[] = [];
  const upstreams = [...plan.upstreams];
  if (options.startLocal ?? localChainWanted(env)) {
    const started = await Promise.allSettled(
      plan.local.map(async ({ network, chainId }) => {
        const node = await startLocalNode(
          { chainId, blockTimeSeconds: plan.blockTimeSeconds },
          options.stateDir ? path.join(options.stateDir, `${network}.json`) : undefined,
          (message) => options.log?.(`chain: ${network}: ${message}`),
        );
        nodes.push(node);
        const log = (message: string) => options.log?.(`chain: ${network}: ${message}`);
        // Beside the chain's file, so the next start empties what a killed run left; else this process's own.
        const statesDir = options.stateDir
          ? path.join(options.stateDir, `${network}.archive-states`)
          : path.join(tmpdir(), `nodeplane-${network}.archive-states-${process.pid}`);
        const archive = options.archiveNodes
          ? await startArchive(node, plan.blockTimeSeconds, statesDir, log)
          : undefined;
        if (archive) {
          nodes.push(archive.node);
          followers.push(archive.follower);
        }
        return { network, node, archive: archive?.follower };
      }),
    );
    for (const [i, result] of started.entries()) {
      if (result.status === "fulfilled") {
        const { network, node, archive } = result.value;
        upstreams.push({
          network,
          chainId: node.chainId,
          httpUrl: node.httpUrl,
          wsUrl: node.wsUrl,
          source: "local",
          archive,
        });
        options.log?.(
          `chain: ${network} (chain id ${node.chainId}) served by a local anvil at ${node.httpUrl}${archive ? `, old state by an archive node at ${archive.httpUrl}` : ""}`,
        );
      } else {
        options.log?.(`chain: ${plan.local[i].network} has no node: anvil failed to start: ${result.reason}`);
      }
    }
  }
  for (const u of plan.upstreams) options.log?.(`chain: ${u.network} forwarded to its configured upstream`);
  const map = staticUpstreams(upstreams);
  return {
    get: map.get,
    list: map.list,
    async stop() {
      process.removeListener("exit", killAll);
      await Promise.all(followers.map((f) => f.stop()));
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}

/**
 * An archive-mode node beside a served one, from the same genesis, and what keeps it on the served chain
 * (chain/archive.ts). Without one (it failed to start) calls at old blocks get the served node's answer.
 */
async function startArchive(
  served: AnvilNode,
  blockTimeSeconds: number,
  statesDir: string,
  log: (message: string) => void,
): Promise<{ node: AnvilNode; follower: ArchiveFollower } | undefined> {
  try {
    const genesis = await fetch(served.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x0",false]}',
    });
    const { result } = (await genesis.json()) as { result: { timestamp: string } };
    const node = await startAnvil({
      chainId: served.chainId,
      archive: { genesisTimestamp: Number(result.timestamp), statesDir },
    });
    // Half a block time: an old block is there within about one block of its mining.
    const follower = new ArchiveFollower(served.httpUrl, node.httpUrl, {
      pollMs: Math.max(250, (blockTimeSeconds * 1000) / 2),
      log,
    });
    follower.start();
    return { node, follower };
  } catch (error) {
    log(`no archive node: ${(error as Error).message}`);
    return undefined;
  }
}
