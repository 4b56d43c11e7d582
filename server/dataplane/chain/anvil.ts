import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import path from "node:path";

/** A running local anvil node. */
export interface AnvilNode {
  chainId: number;
  httpUrl: string;
  wsUrl: string;
  pid: number;
  stop(): Promise<void>;
}

export interface AnvilOptions {
  chainId: number;
  /** Seconds between mined blocks; 0 mines one block per transaction only. */
  blockTimeSeconds?: number;
  port?: number;
  host?: string;
  /**
   * A file the chain is kept in: loaded at start when it exists, written every {@link STATE_INTERVAL_SECONDS}
   * and on stop. Without it the chain starts again at block 0 each time.
   */
  statePath?: string;
  /**
   * An archive-mode node (chain/archive.ts): every block's state kept, nothing mined but what it is told to
   * mine (the served node's blocks, replayed in order), from the served node's genesis timestamp.
   */
  archive?: {
    genesisTimestamp: number;
    /**
     * Where it keeps the states beyond those it holds in memory (anvil's --cache-path; about 150 KB a block
     * on disk). Emptied when it starts and when it stops: a start replays the chain from genesis anyway.
     */
    statesDir: string;
  };
}

/** How often a node with a state file writes it (a node killed outright loses at most this much). */
export const STATE_INTERVAL_SECONDS = 30;
/** How long a node with a state file is given to write it when stopped, before it is killed. */
export const STATE_STOP_MS = 60_000;

/** The platform binary shipped by the npm package @foundry-rs/anvil (its optional dependency per platform). */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const platformPackage = `@foundry-rs/anvil-${process.platform === "win32" ? "windows" : process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
  const manifest = require.resolve(`${platformPackage}/package.json`);
  const binary = path.join(path.dirname(manifest), "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
  if (!existsSync(binary))
    throw new Error(`The anvil binary is missing at ${binary}; run npm ci (its install script must be allowed).`);
  return binary;
}

/** A free TCP port on the host: anvil is started with --silent, so its own `--port 0` choice cannot be read back. */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/**
 * One eth_chainId call's HTTP status. Through node:http, not fetch: a start waits for its nodes while it
 * loads the app, and fetch's first call loads Node's own undici on that thread (~0.1 s).
 */
function chainIdStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
    // agent false: a connection of its own, closed with the answer (none kept open to a node after its start).
    const request = httpRequest(
      url,
      { method: "POST", agent: false, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.once("end", () => resolve(res.statusCode ?? 0));
        res.once("error", reject);
      },
    );
    request.once("error", reject);
    request.end(body);
  });
}

async function waitForRpc(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`anvil exited with code ${child.exitCode} before it answered`);
    try {
      const status = await chainIdStatus(url);
      if (status >= 200 && status < 300) return;
      lastError = new Error(`HTTP ${status}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`anvil did not answer at ${url} within ${timeoutMs} ms: ${String(lastError)}`);
}

/** Blocks whose state a local node keeps (for eth_call, balances and traces at those blocks). */
export const KEPT_STATES = 64;

/**
 * Starts anvil with the given chain id and waits until it answers JSON-RPC.
 * `--silent` matters for throughput: without it anvil prints a line per request.
 * `--prune-history` keeps the state of the last {@link KEPT_STATES} blocks in memory, like a pruned full
 * node (every block, transaction and receipt is still served). Without it anvil writes each older
 * block's state under ~/.foundry/anvil/tmp, about 400 KB a block, never removed: 3 GB for 8,000 blocks,
 * and the disk writes slowed mining by a third.
 */
export async function startAnvil(options: AnvilOptions): Promise<AnvilNode> {
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? (await freePort(host));
  const args = ["--host", host, "--port", String(port), "--chain-id", String(options.chainId), "--silent"];
  if (options.archive) {
    rmSync(options.archive.statesDir, { recursive: true, force: true });
    mkdirSync(options.archive.statesDir, { recursive: true });
    args.push("--no-mining", "--order", "fifo", "--timestamp", String(options.archive.genesisTimestamp));
    args.push("--cache-path", options.archive.statesDir);
  } else args.push("--prune-history", String(KEPT_STATES));
  if (!options.archive && options.blockTimeSeconds && options.blockTimeSeconds > 0)
    args.push("--block-time", String(options.blockTimeSeconds));
  if (options.statePath) args.push("--state", options.statePath, "--state-interval", String(STATE_INTERVAL_SECONDS));
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const httpUrl = `http://${host}:${port}`;
  try {
    await waitForRpc(httpUrl, child, 15_000);
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`${(error as Error).message}${stderr ? `\n${stderr}` : ""}`);
  }
  return {
    chainId: options.chainId,
    httpUrl,
    wsUrl: `ws://${host}:${port}`,
    pid: child.pid ?? -1,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // SIGTERM: anvil writes its state file, if it has one, before it exits.
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), options.statePath ? STATE_STOP_MS : 3000);
      await exited;
      clearTimeout(timer);
      if (options.archive) rmSync(options.archive.statesDir, { recursive: true, force: true });
    },
  };
}
