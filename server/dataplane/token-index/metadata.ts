import type { RpcClient } from "../datasets/rpc.ts";
import type { TokenStandard } from "./logs.ts";
import type { TokenMetadata } from "./store.ts";

/** Selectors of the metadata reads: name(), symbol(), decimals(). */
const NAME = "0x06fdde03";
const SYMBOL = "0x95d89b41";
const DECIMALS = "0x313ce567";
/** Longest name or symbol kept; a contract may answer anything. */
const MAX_TEXT = 200;

/**
 * Reads name and symbol (and decimals for ERC-20) from each token contract with eth_call, in one batch.
 * A read that reverts or answers something that is not a string (or a bytes32, as early tokens do) is
 * null: metadata is optional in every token standard.
 */
export async function readTokenMetadata(
  rpc: RpcClient,
  tokens: readonly { address: string; standard: TokenStandard }[],
): Promise<TokenMetadata[]> {
  if (tokens.length === 0) return [];
  const call = (to: string, data: string) => ({ method: "eth_call", params: [{ to, data }, "latest"] });
  const results = await rpc.batchSettled(
    tokens.flatMap((t) => [call(t.address, NAME), call(t.address, SYMBOL), call(t.address, DECIMALS)]),
  );
  return tokens.map((t, i) => {
    const [name, symbol, decimals] = results.slice(i * 3, i * 3 + 3);
    return {
      address: t.address,
      standard: t.standard,
      name: abiText(name),
      symbol: abiText(symbol),
      decimals: t.standard === "ERC20" ? abiSmallUint(decimals) : null,
    };
  });
}

/** An ABI-encoded string (or a bytes32 padded with zeros), without control characters; null otherwise. */
export function abiText(result: unknown): string | null {
  if (typeof result !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(result)) return null;
  const bytes = Buffer.from(result.slice(2), "hex");
  let text: Buffer;
  if (bytes.length === 32) {
    const end = bytes.indexOf(0);
    text = bytes.subarray(0, end === -1 ? 32 : end);
  } else {
    if (bytes.length < 64) return null;
    const offset = Number(bytes.readBigUInt64BE(24));
    if (offset + 32 > bytes.length) return null;
    const length = Number(bytes.readBigUInt64BE(offset + 24));
    if (offset + 32 + length > bytes.length) return null;
    text = bytes.subarray(offset + 32, offset + 32 + length);
  }
  const cleaned = [...text.toString("utf8")]
    .filter((c) => {
      const code = c.codePointAt(0) ?? 0;
      return code > 0x1f && code !== 0x7f && code !== 0xfffd;
    })
    .join("")
    .slice(0, MAX_TEXT);
  return cleaned.length > 0 ? cleaned : null;
}

function abiSmallUint(result: unknown): number | null {
  if (typeof result !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(result)) return null;
  const value = BigInt(result);
  return value <= 255n ? Number(value) : null;
}
