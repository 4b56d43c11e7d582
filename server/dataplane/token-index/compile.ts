import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Abi, Hex } from "viem";

/** The test contract set's source (ERC-20, ERC-721, ERC-1155), compiled by solc-js. */
export const TEST_TOKENS_SOURCE = path.join(import.meta.dirname, "contracts", "TestTokens.sol");

export type TestContractName = "TestERC20" | "TestERC721" | "TestERC1155";

export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}

export type TestTokenContracts = Record<TestContractName, CompiledContract>;

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
} as const;

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

/**
 * The test contracts compiled with solc from npm (its standard JSON interface). Compiling takes ~4 s
 * here (loading solc ~1 s of it), so the output is kept in `cacheDir` under a key made of the source,
 * the compiler's version and the settings: a start compiles only when one of them changed.
 */
export function compileTestTokens(cacheDir: string): TestTokenContracts {
  const require = createRequire(import.meta.url);
  const source = readFileSync(TEST_TOKENS_SOURCE, "utf8");
  const solcVersion = (require("solc/package.json") as { version: string }).version;
  const key = createHash("sha256")
    .update(JSON.stringify([source, solcVersion, SETTINGS]))
    .digest("hex")
    .slice(0, 32);
  const cacheFile = path.join(cacheDir, `test-tokens-${key}.json`);
  try {
    return JSON.parse(readFileSync(cacheFile, "utf8")) as TestTokenContracts;
  } catch {
    // Not compiled yet (or a cache file cut short): compile below.
  }
  const solc = require("solc") as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({ language: "Solidity", sources: { "TestTokens.sol": { content: source } }, settings: SETTINGS }),
    ),
  ) as SolcOutput;
  const failures = (output.errors ?? []).filter((e) => e.severity === "error");
  if (failures.length > 0)
    throw new Error(`TestTokens.sol does not compile:\n${failures.map((e) => e.formattedMessage).join("\n")}`);
  const built = output.contracts["TestTokens.sol"];
  const pick = (name: TestContractName): CompiledContract => ({
    abi: built[name].abi,
    bytecode: `0x${built[name].evm.bytecode.object}`,
  });
  const contracts: TestTokenContracts = {
    TestERC20: pick("TestERC20"),
    TestERC721: pick("TestERC721"),
    TestERC1155: pick("TestERC1155"),
  };
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(contracts));
  renameSync(partial, cacheFile);
  return contracts;
}
