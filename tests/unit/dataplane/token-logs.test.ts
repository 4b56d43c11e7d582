// ERC-20 Transfer logs decoded into each holder's sums: the same totals as BigInt arithmetic on each log,
// for amounts of every size up to 2^256 - 1, in upper- and lower-case hex; data that is not hex refused.
import { expect, it } from "vitest";
import {
  addLogEffects,
  noEffects,
  type RawLog,
  TRANSFER_TOPIC,
  ZERO_ADDRESS,
} from "../../../server/dataplane/token-index/logs.ts";

const MAX = 2n ** 256n - 1n;
const topic = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}`;
const word = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;
const holder = (i: number) => `0x${(i + 1).toString(16).padStart(40, "0")}`;
const TOKEN = "0x00000000000000000000000000000000000000aa";

function transfer(from: string, to: string, amount: bigint, data = word(amount)): RawLog {
  return { address: TOKEN, topics: [TRANSFER_TOPIC, topic(from), topic(to)], data, blockNumber: "0x1" };
}

/** Each holder's [in, out] summed with BigInts, the zero address left out as the index leaves it out. */
function expectedSums(logs: readonly { from: string; to: string; amount: bigint }[]): Map<string, [bigint, bigint]> {
  const sums = new Map<string, [bigint, bigint]>();
  const of = (h: string) => {
    let q = sums.get(h);
    if (!q) {
      q = [0n, 0n];
      sums.set(h, q);
    }
    return q;
  };
  for (const { from, to, amount } of logs) {
    of(to)[0] += amount;
    of(from)[1] += amount;
  }
  sums.delete(ZERO_ADDRESS);
  return sums;
}

it("sums ERC-20 amounts of every size exactly, as BigInts would", () => {
  let seed = 7n;
  const random = () => {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) & MAX;
    return seed >> BigInt(Number(seed % 256n));
  };
  const amounts = [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 224n, MAX, MAX - 1n, 10n ** 18n];
  for (let i = 0; i < 300; i++) amounts.push(random());
  const transfers = amounts.map((amount, i) => ({
    from: i % 5 === 0 ? ZERO_ADDRESS : holder(i % 7),
    to: holder((i * 3) % 11),
    amount,
  }));
  const effects = noEffects();
  addLogEffects(
    effects,
    transfers.map((t, i) =>
      transfer(t.from, t.to, t.amount, i % 2 ? word(t.amount).toUpperCase().replace("0X", "0x") : undefined),
    ),
  );
  expect(effects.transfers).toBe(transfers.length);
  expect(new Map(effects.fungible.get(TOKEN))).toEqual(expectedSums(transfers));
});

it("refuses a Transfer log whose data is not hex", () => {
  const bad = transfer(holder(1), holder(2), 0n, `0x${"g".repeat(64)}`);
  expect(() => addLogEffects(noEffects(), [bad])).toThrow(SyntaxError);
});
