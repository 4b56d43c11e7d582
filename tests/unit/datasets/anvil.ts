import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import path from "node:path";
import {
  type Address,
  concatHex,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  type Hex,
  http,
  keccak256,
  parseEther,
  toHex,
} from "viem";
import { foundry } from "viem/chains";

/** A real anvil node on a free loopback port, for tests. */
export interface Anvil {
  url: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve(
    `@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}/package.json`,
  );
  return path.join(path.dirname(pkg), "bin", "anvil");
}

export async function startAnvil(): Promise<Anvil> {
  const port = await freePort();
  const child: ChildProcess = spawn(anvilBinary(), ["--port", String(port), "--host", "127.0.0.1", "--silent"], {
    stdio: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("anvil did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** anvil's first three unlocked dev accounts. */
export const ACCOUNTS = {
  alice: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  bob: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  carol: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
} as const satisfies Record<string, Address>;

export const TRANSFER_TOPIC = keccak256(toHex("Transfer(address,address,uint256)"));

/**
 * Runtime code of a minimal token: any call emits the ERC-20 event
 * `Transfer(msg.sender, to, amount)` with calldata = abi.encode(to, amount), then stops.
 *   PUSH1 0x20 CALLDATALOAD PUSH1 0 MSTORE       ; memory[0..32] = amount
 *   PUSH1 0 CALLDATALOAD CALLER PUSH32 <topic>   ; topics: Transfer, from = caller, to
 *   PUSH1 0x20 PUSH1 0 LOG3 STOP
 */
function tokenRuntime(): Hex {
  return concatHex(["0x602035600052600035337f", TRANSFER_TOPIC, "0x60206000a300"]);
}

function deployCode(runtime: Hex): Hex {
  const len = (runtime.length - 2) / 2;
  // PUSH1 len DUP1 PUSH1 0x0b PUSH1 0 CODECOPY PUSH1 0 RETURN, then the runtime.
  return concatHex([`0x60${len.toString(16).padStart(2, "0")}80600b6000396000f3`, runtime]);
}

export interface Activity {
  token: Address;
  /** Blocks (inclusive) that hold the activity below. */
  fromBlock: number;
  toBlock: number;
  /** 1 ETH alice → bob; 50 ETH alice → carol; token Transfer bob → carol of 1234. */
  smallTransfer: Hex;
  largeTransfer: Hex;
  tokenTransfer: Hex;
}

/** Makes real activity on the node: two native transfers, a token deployment and a token Transfer. */
export async function makeActivity(url: string): Promise<Activity> {
  const transport = http(url);
  const pub = createPublicClient({ chain: foundry, transport });
  const wallet = createWalletClient({ chain: foundry, transport });
  const smallTransfer = await wallet.sendTransaction({
    account: ACCOUNTS.alice,
    to: ACCOUNTS.bob,
    value: parseEther("1"),
  });
  const fromBlock = Number((await pub.waitForTransactionReceipt({ hash: smallTransfer })).blockNumber);
  const largeTransfer = await wallet.sendTransaction({
    account: ACCOUNTS.alice,
    to: ACCOUNTS.carol,
    value: parseEther("50"),
  });
  await pub.waitForTransactionReceipt({ hash: largeTransfer });
  const deploy = await wallet.sendTransaction({ account: ACCOUNTS.alice, data: deployCode(tokenRuntime()) });
  const receipt = await pub.waitForTransactionReceipt({ hash: deploy });
  const token = receipt.contractAddress as Address;
  const tokenTransfer = await wallet.sendTransaction({
    account: ACCOUNTS.bob,
    to: token,
    data: encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [ACCOUNTS.carol, 1234n]),
  });
  const toBlock = Number((await pub.waitForTransactionReceipt({ hash: tokenTransfer })).blockNumber);
  return { token, fromBlock, toBlock, smallTransfer, largeTransfer, tokenTransfer };
}
