import { randomBytes } from "node:crypto";
import type { UpstreamMap } from "../../../dataplane/chain/nodes.ts";
import type { RpcClient } from "../../../dataplane/datasets/rpc.ts";
import type { CryptoChargeSettings } from "../../../platform/config.ts";
import type { Db } from "../../../platform/db/index.ts";
import { AppError, conflict, foundOr } from "../../../platform/errors.ts";
import type { DomainEvents } from "../../../platform/events.ts";
import { isUuid } from "../../../platform/ids.ts";
import { lockedSubscription } from "../../account/service.ts";
import { settlePaidInvoice } from "../service.ts";
import { getInvoice, insertTopUpCredit, lockedInvoice } from "../store.ts";
import {
  type ChargeTarget,
  type CryptoChargeStatus,
  type CryptoProvider,
  chargeStatusAfter,
  TOP_UP,
  weiForCents,
} from "./rules.ts";
import * as store from "./store.ts";

/** What crypto charges run on: the database, the chain nodes, the settings, the deposit addresses. */
export interface CryptoChargeDeps {
  db: Db;
  events: DomainEvents;
  upstreams: UpstreamMap;
  settings: CryptoChargeSettings;
  /** The deposit address of a derivation index; null when no mnemonic is configured. */
  addressOf: ((index: number) => Promise<string>) | null;
}

export type { CryptoChargeRow } from "./store.ts";

/** Invoice statuses a payment may still settle (invoiceStatusAfter allows "paid" from them). */
const PAYABLE: readonly string[] = ["open", "uncollectible"];

const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A charge's public code: 8 characters as Coinbase's, or a PaymentIntent-like id for Stripe's operation. */
function newCode(provider: CryptoProvider): string {
  const bytes = randomBytes(24);
  const pick = (n: number) => Array.from(bytes.subarray(0, n), (b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join("");
  return provider === "COINBASE" ? pick(8) : `pi_${pick(24)}`;
}

/**
 * A charge for what remains of an open invoice, or for a top-up of the account's balance: a fresh deposit
 * address on the configured network and the amount in wei at the configured rate, payable until the
 * deadline. While the invoice has an open charge, that one is answered instead of a second.
 */
export async function createCryptoCharge(
  deps: CryptoChargeDeps,
  accountId: string,
  provider: CryptoProvider,
  target: ChargeTarget,
  now = new Date(),
): Promise<store.CryptoChargeRow> {
  const invoice =
    target.kind === "invoice"
      ? foundOr(
          isUuid(target.invoiceId) ? await getInvoice(deps.db, accountId, target.invoiceId) : undefined,
          "The invoice",
        )
      : null;
  if (invoice && (!PAYABLE.includes(invoice.status) || invoice.amountRemainingCents <= 0))
    throw conflict(`Invoice ${invoice.number} is ${invoice.status}: it has nothing left to pay.`);
  const { network } = deps.settings;
  if (!deps.addressOf)
    throw conflict("Crypto payments are not set up on this service: its operator has configured no deposit mnemonic.");
  const addressOf = deps.addressOf;
  if (!deps.upstreams.get(network))
    throw new AppError("UPSTREAM_FAILED", `Crypto payments are made on ${network}, which has no chain node here.`);
  const amountCents = invoice ? invoice.amountRemainingCents : target.kind === "topUp" ? target.amountCents : 0;
  for (;;) {
    const made = await deps.db.transaction(async (tx) => {
      const open = invoice ? await store.openChargeOfInvoice(tx, accountId, invoice.id) : undefined;
      if (open) return open;
      const addressIndex = await store.nextAddressIndex(tx);
      return store.insertCharge(tx, accountId, {
        code: newCode(provider),
        provider,
        invoiceId: invoice?.id ?? null,
        type: invoice ? null : TOP_UP,
        amountCents,
        network,
        addressIndex,
        address: await addressOf(addressIndex),
        amountWei: weiForCents(amountCents, deps.settings.usdCentsPerEth).toString(),
        status: "NEW",
        expiresAt: new Date(now.getTime() + deps.settings.chargeMs),
      });
    });
    if (made) return made;
    // Another request made the invoice's charge at the same moment (or, once in 10^12, the code was taken).
    const open = invoice ? await store.openChargeOfInvoice(deps.db, accountId, invoice.id) : undefined;
    if (open) return open;
  }
}

export async function chargeOf(deps: CryptoChargeDeps, accountId: string, provider: CryptoProvider, code: string) {
  return foundOr(await store.chargeByCode(deps.db, accountId, provider, code), "The charge");
}

/** A charge's move, as the watcher made it. */
export interface ChargeMove {
  chargeId: string;
  accountId: string;
  /** The invoice it paid; null for a top-up. */
  invoiceId: string | null;
  from: CryptoChargeStatus;
  to: CryptoChargeStatus;
  receivedWei: bigint;
}

const hex = (n: number) => `0x${n.toString(16)}`;
/** Charges looked at per round trip to the node. */
const WATCH_BATCH = 200;

/**
 * One look at every open charge on the network: the balance of each deposit address at `head` and at the
 * newest block with the confirmations asked for, and the status the rules say. A move is written only
 * from the status and balance it was read in (store.moveCharge): with two processes watching, one writes
 * it and the other's is dropped, so a charge is confirmed, and its invoice paid, once.
 */
export async function watchChargesOnce(
  deps: CryptoChargeDeps,
  rpc: RpcClient,
  pushedHead: number | null,
  now = new Date(),
): Promise<ChargeMove[]> {
  const moves: ChargeMove[] = [];
  let head = pushedHead;
  let after: string | null = null;
  for (;;) {
    const charges = await store.openChargesOn(deps.db, deps.settings.network, after, WATCH_BATCH);
    if (charges.length === 0) return moves;
    head ??= Number.parseInt(await rpc.call<string>("eth_blockNumber"), 16);
    moves.push(...(await watchBatch(deps, rpc, charges, head, now)));
    after = charges[charges.length - 1].id;
  }
}

async function watchBatch(
  deps: CryptoChargeDeps,
  rpc: RpcClient,
  charges: store.CryptoChargeRow[],
  head: number,
  now: Date,
): Promise<ChargeMove[]> {
  const moves: ChargeMove[] = [];
  const confirmedBlock = head - deps.settings.confirmations + 1;
  const balances = (await rpc.batch(
    charges.flatMap((c) => [
      { method: "eth_getBalance", params: [c.address, hex(head)] },
      ...(confirmedBlock >= 0 ? [{ method: "eth_getBalance", params: [c.address, hex(confirmedBlock)] }] : []),
    ]),
  )) as string[];
  const perCharge = confirmedBlock >= 0 ? 2 : 1;
  for (const [i, charge] of charges.entries()) {
    const latestWei = BigInt(balances[i * perCharge]);
    const confirmedWei = confirmedBlock >= 0 ? BigInt(balances[i * perCharge + 1]) : null;
    const from = charge.status as CryptoChargeStatus;
    const to = chargeStatusAfter(
      { status: from, amountWei: BigInt(charge.amountWei), expiresAt: charge.expiresAt },
      { latestWei, confirmedWei, confirmedBlock: confirmedBlock >= 0 ? confirmedBlock : null, now },
    );
    if (to === from && latestWei === BigInt(charge.receivedWei)) continue;
    const moved = await deps.db.transaction(async (tx) => {
      const done = await store.moveCharge(tx, charge.accountId, charge, {
        status: to,
        receivedWei: latestWei.toString(),
        confirmedBlock: to === "CONFIRMED" ? confirmedBlock : null,
        confirmedAt: to === "CONFIRMED" ? now : null,
      });
      if (!done || to !== "CONFIRMED") return done;
      if (charge.type === TOP_UP) {
        // The move above is written once; the credit's unique charge id is the last guard.
        await insertTopUpCredit(tx, charge.accountId, {
          cryptoChargeId: charge.id,
          cents: charge.amountCents,
          description: `Crypto top-up ${charge.code}`,
        });
        return true;
      }
      if (!charge.invoiceId) return true;
      // The subscription's lock, then the invoice's, as a card payment takes them.
      await lockedSubscription(tx, charge.accountId);
      const invoice = await lockedInvoice(tx, charge.accountId, charge.invoiceId);
      // Paid meanwhile another way: the charge is confirmed all the same (the funds are in its address).
      if (invoice && PAYABLE.includes(invoice.status)) await settlePaidInvoice(tx, charge.accountId, invoice);
      return true;
    });
    if (!moved) continue;
    moves.push({
      chargeId: charge.id,
      accountId: charge.accountId,
      invoiceId: charge.invoiceId,
      from,
      to,
      receivedWei: latestWei,
    });
    if (to === "CONFIRMED")
      await deps.events.emitAndWait("viewer.changed", { accountId: charge.accountId, userId: null });
  }
  return moves;
}
