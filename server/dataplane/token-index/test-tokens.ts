/**
 * The test contract set deployed on a local chain by the seed, with a few transfers, so that the token
 * add-ons answer something checkable there. The deployer is the node's last unlocked account (anvil's
 * default accounts), the holders the three before it: a chain that already has the set (its deployer has
 * sent transactions) is left as it is, so a restart on a kept chain deploys nothing.
 */
import { type Abi, encodeDeployData, encodeFunctionData, getContractAddress, type Hex } from "viem";
import type { RpcClient } from "../datasets/rpc.ts";
import { compileTestTokens, type TestTokenContracts } from "./compile.ts";

export interface TestTokenSet {
  deployer: string;
  /** Accounts holding tokens after the seed's transfers. */
  holders: string[];
  erc20: string[];
  erc721: string;
  erc1155: string;
}

export interface Transaction {
  from: string;
  to?: string;
  data: Hex;
}

interface Receipt {
  status: string;
  blockNumber: string;
  contractAddress: string | null;
}

const RECEIPT_POLL_MS = 100;
const RECEIPT_TIMEOUT_MS = 60_000;

/**
 * Sends transactions from unlocked accounts in order (the node estimates their gas) and waits until each
 * is mined; throws on a revert.
 */
export async function sendTransactions(rpc: RpcClient, transactions: readonly Transaction[]): Promise<Receipt[]> {
  const hashes: string[] = [];
  for (const tx of transactions) hashes.push(await rpc.call<string>("eth_sendTransaction", [tx]));
  const receipts: Receipt[] = [];
  const deadline = Date.now() + RECEIPT_TIMEOUT_MS;
  for (const [i, hash] of hashes.entries()) {
    for (;;) {
      const receipt = await rpc.call<Receipt | null>("eth_getTransactionReceipt", [hash]);
      if (receipt) {
        if (receipt.status !== "0x1") throw new Error(`transaction ${i + 1} of ${hashes.length} reverted (${hash})`);
        receipts.push(receipt);
        break;
      }
      if (Date.now() > deadline)
        throw new Error(
          `transaction ${hash} was not mined within ${RECEIPT_TIMEOUT_MS} ms (pool: ${JSON.stringify(await rpc.call("txpool_status"))})`,
        );
      await new Promise((r) => setTimeout(r, RECEIPT_POLL_MS));
    }
  }
  return receipts;
}

/** A call of `fn` on the contract `to`, from `from`. */
export function contractCall(abi: Abi, from: string, to: string, fn: string, args: readonly unknown[]): Transaction {
  return { from, to, data: encodeFunctionData({ abi, functionName: fn, args }) };
}

/** Deploys the set with its seed transfers, unless the chain has it already; answers where it is. */
export async function deployTestTokens(
  rpc: RpcClient,
  cacheDir: string,
): Promise<TestTokenSet & { deployed: boolean }> {
  const accounts = await rpc.call<string[]>("eth_accounts");
  if (accounts.length < 4) throw new Error("the node has fewer than 4 unlocked accounts to deploy test tokens from");
  const deployer = accounts[accounts.length - 1].toLowerCase();
  const holders = accounts.slice(accounts.length - 4, accounts.length - 1).map((a) => a.toLowerCase());
  const at = (nonce: number) => getContractAddress({ from: deployer as Hex, nonce: BigInt(nonce) }).toLowerCase();
  const set: TestTokenSet = { deployer, holders, erc20: [at(0), at(1)], erc721: at(2), erc1155: at(3) };
  const nonce = Number.parseInt(await rpc.call<string>("eth_getTransactionCount", [deployer, "latest"]), 16);
  if (nonce > 0) return { ...set, deployed: false };

  const contracts = compileTestTokens(cacheDir);
  const deploy = (name: keyof TestTokenContracts, args: readonly unknown[]): Transaction => ({
    from: deployer,
    data: encodeDeployData({ abi: contracts[name].abi, bytecode: contracts[name].bytecode, args }),
  });
  const [a, b, c] = holders;
  const erc20 = contracts.TestERC20.abi;
  const erc721 = contracts.TestERC721.abi;
  const erc1155 = contracts.TestERC1155.abi;
  await sendTransactions(rpc, [
    deploy("TestERC20", ["Nodeplane Test USD", "NTUSD", 6]),
    deploy("TestERC20", ["Nodeplane Test Token", "NTT", 18]),
    deploy("TestERC721", ["Nodeplane Test Collectible", "NTC"]),
    deploy("TestERC1155", ["Nodeplane Test Items", "NTI"]),
  ]);
  // Each round after the one before is mined: the node estimates a call's gas against the state it has.
  await sendTransactions(rpc, [
    contractCall(erc20, deployer, set.erc20[0], "mint", [a, 1_000_000_000_000n]),
    contractCall(erc20, deployer, set.erc20[0], "mint", [b, 250_000_000n]),
    contractCall(erc20, deployer, set.erc20[1], "mint", [a, 5n * 10n ** 18n]),
    ...[1n, 2n, 3n, 4n, 5n].map((id) => contractCall(erc721, deployer, set.erc721, "mint", [a, id])),
    contractCall(erc1155, deployer, set.erc1155, "mint", [a, 1n, 100n]),
    contractCall(erc1155, deployer, set.erc1155, "mint", [a, 2n, 5n]),
  ]);
  await sendTransactions(rpc, [
    contractCall(erc20, a, set.erc20[0], "transfer", [b, 12_500_000n]),
    contractCall(erc20, b, set.erc20[0], "transfer", [c, 2_500_000n]),
    contractCall(erc20, a, set.erc20[1], "transfer", [c, 10n ** 18n]),
    contractCall(erc721, a, set.erc721, "transferFrom", [a, b, 2n]),
    contractCall(erc721, a, set.erc721, "transferFrom", [a, c, 3n]),
    contractCall(erc1155, a, set.erc1155, "safeBatchTransferFrom", [a, b, [1n, 2n], [10n, 1n], "0x"]),
    contractCall(erc1155, a, set.erc1155, "safeTransferFrom", [a, c, 1n, 7n, "0x"]),
  ]);
  return { ...set, deployed: true };
}
