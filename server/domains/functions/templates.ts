import type { Db } from "../../platform/db/index.ts";
import { badInput } from "../../platform/errors.ts";
import { createFunction, type FunctionRow } from "./service.ts";

/**
 * Quick functions (feature flag `quickfunctions`): templates that become a deployed function in one
 * step. Each one runs as it is; `exampleParams` is what the console's Run tab offers to call it with.
 */
export const FUNCTION_TEMPLATES = [
  {
    id: "hello-user-data",
    title: "Echo user data",
    description: "Returns the user_data it was called with, and logs it. A start for functions called over HTTP.",
    code: `function main(params) {
  console.log("called with", JSON.stringify(params.user_data));
  return { received: params.user_data, at: new Date().toISOString() };
}
`,
    exampleParams: '{ "user_data": { "name": "world" } }',
  },
  {
    id: "block-summary",
    title: "Block summary",
    description: "For the BLOCK dataset: each block's number, transaction count and gas used.",
    code: `async function main(params) {
  const blocks = Array.isArray(params.data) ? params.data : [];
  return blocks.map((block) => ({
    number: parseInt(block.number, 16),
    transactions: (block.transactions || []).length,
    gasUsed: parseInt(block.gasUsed, 16),
  }));
}
`,
    exampleParams: '{ "data": [{ "number": "0x10", "gasUsed": "0x5208", "transactions": [{}] }] }',
  },
  {
    id: "large-transfers",
    title: "Large ETH transfers",
    description: "For the BLOCK dataset: transactions moving more than user_data.minEth (default 10) ether.",
    code: `function main(params) {
  const minWei = BigInt(Math.round(((params.user_data && params.user_data.minEth) || 10) * 1e6)) * 10n ** 12n;
  const blocks = Array.isArray(params.data) ? params.data : [];
  const large = [];
  for (const block of blocks) {
    for (const tx of block.transactions || []) {
      if (typeof tx === "object" && BigInt(tx.value || "0x0") >= minWei)
        large.push({ block: parseInt(block.number, 16), hash: tx.hash, from: tx.from, to: tx.to, value: tx.value });
    }
  }
  console.log(large.length + " large transfers");
  return large;
}
`,
    exampleParams:
      '{ "data": [{ "number": "0x1", "transactions": [{ "hash": "0xab", "from": "0x1", "to": "0x2", "value": "0x8ac7230489e80000" }] }], "user_data": { "minEth": 5 } }',
  },
  {
    id: "erc20-transfers",
    title: "ERC-20 transfers",
    description: "For the LOGS dataset: decodes Transfer(address,address,uint256) events.",
    code: `const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

function main(params) {
  const logs = (Array.isArray(params.data) ? params.data : []).flat();
  return logs
    .filter((log) => log && log.topics && log.topics[0] === TRANSFER && log.topics.length === 3)
    .map((log) => ({
      token: log.address,
      from: "0x" + log.topics[1].slice(26),
      to: "0x" + log.topics[2].slice(26),
      value: BigInt(log.data).toString(),
      tx: log.transactionHash,
    }));
}
`,
    exampleParams:
      '{ "data": [[{ "address": "0xa0b8", "topics": ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", "0x0000000000000000000000000000000000000000000000000000000000000001", "0x0000000000000000000000000000000000000000000000000000000000000002"], "data": "0x64", "transactionHash": "0xcd" }]] }',
  },
] as const;

export type FunctionTemplate = (typeof FUNCTION_TEMPLATES)[number];

/** A template deployed as a new function of the account, named as the caller asks or after the template. */
export function createQuickFunction(
  db: Db,
  accountId: string,
  input: { templateId: string; name?: string },
): Promise<FunctionRow> {
  const template = FUNCTION_TEMPLATES.find((t) => t.id === input.templateId);
  if (!template) throw badInput([{ pointer: "/templateId", message: "There is no function template of this id." }]);
  return createFunction(db, accountId, {
    name: input.name?.trim() || template.title,
    description: template.description,
    code: template.code,
  });
}
