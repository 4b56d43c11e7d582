/**
 * The rules of a crypto charge, pure: its amount in wei, the status an observation of its deposit
 * address moves it to, and how each provider's status query names that status. The watcher (watcher.ts)
 * observes; the service applies what these decide.
 */

import { badInput } from "../../../platform/errors.ts";

export type CryptoChargeStatus = "NEW" | "UNDERPAID" | "PENDING" | "CONFIRMED" | "EXPIRED";
export type CryptoProvider = "COINBASE" | "STRIPE";
/** The spec's charge types. */
export type CryptoChargeType = "CREATE_SUBSCRIPTION" | "CRYPTO_TOP_UP" | "UPGRADE_SUBSCRIPTION";
export const TOP_UP: CryptoChargeType = "CRYPTO_TOP_UP";

/** What a charge is for: what remains of an open invoice, or an amount credited to the account's balance. */
export type ChargeTarget = { kind: "invoice"; invoiceId: string } | { kind: "topUp"; amountCents: number };

/**
 * The one rule of what a charge asks for: a top-up names an amount and no invoice; without a type, a
 * charge pays an invoice and names no amount (the invoice's is taken). The spec's subscription types are
 * refused: a plan change is billed on the period's invoice (decision 1602), which is paid as any invoice.
 */
export function chargeTarget(input: {
  type?: CryptoChargeType | null;
  invoiceId?: string | null;
  amountCents?: number | null;
}): ChargeTarget {
  if (input.type && input.type !== TOP_UP) {
    throw badInput([
      {
        pointer: "/type",
        message: `A ${input.type} charge is not made here: plan changes are billed on the period's invoice, which you can pay with crypto.`,
      },
    ]);
  }
  if (input.type === TOP_UP) {
    if (input.invoiceId) {
      throw badInput([{ pointer: "/invoiceId", message: "A top-up credits your balance: it pays no invoice." }]);
    }
    if (input.amountCents === undefined || input.amountCents === null) {
      throw badInput([{ pointer: "/amountCents", message: "Say how much to top up." }]);
    }
    return { kind: "topUp", amountCents: input.amountCents };
  }
  if (input.amountCents !== undefined && input.amountCents !== null) {
    throw badInput([
      {
        pointer: "/amountCents",
        message: "An invoice's charge asks for what remains of it: send the type CRYPTO_TOP_UP to top up.",
      },
    ]);
  }
  if (!input.invoiceId) throw badInput([{ pointer: "/invoiceId", message: "Name the open invoice to pay." }]);
  return { kind: "invoice", invoiceId: input.invoiceId };
}

const WEI_PER_ETH = 10n ** 18n;

/**
 * An amount of USD cents in wei at `usdCentsPerEth`, rounded up to the wei: a payer who sends what the
 * charge asks never falls a wei short of the invoice.
 */
export function weiForCents(cents: number, usdCentsPerEth: number): bigint {
  const numerator = BigInt(cents) * WEI_PER_ETH;
  const rate = BigInt(usdCentsPerEth);
  return (numerator + rate - 1n) / rate;
}

/** What the watcher saw of a charge's address: its balance now and at the block with enough confirmations. */
export interface ChargeObservation {
  /** Balance at the latest block. */
  latestWei: bigint;
  /** Balance at (head − confirmations + 1), the newest block with the confirmations asked for; null before the chain has that many blocks. */
  confirmedWei: bigint | null;
  /** That block's number (recorded when the charge confirms). */
  confirmedBlock: number | null;
  now: Date;
}

export interface ChargeState {
  status: CryptoChargeStatus;
  amountWei: bigint;
  expiresAt: Date;
}

/**
 * The one rule for a charge's status. The amount with its confirmations confirms it, whenever it came.
 * Enough seen but not yet confirmed is PENDING, and stays so past the deadline (the payer paid in
 * time). Less than the amount is UNDERPAID; nothing or too little by the deadline is EXPIRED.
 * CONFIRMED and EXPIRED are final.
 */
export function chargeStatusAfter(state: ChargeState, seen: ChargeObservation): CryptoChargeStatus {
  if (state.status === "CONFIRMED" || state.status === "EXPIRED") return state.status;
  if (seen.confirmedWei !== null && seen.confirmedWei >= state.amountWei) return "CONFIRMED";
  if (seen.latestWei >= state.amountWei) return "PENDING";
  if (seen.now >= state.expiresAt) return "EXPIRED";
  return seen.latestWei > 0n ? "UNDERPAID" : "NEW";
}

export const isOpen = (status: CryptoChargeStatus) => status !== "CONFIRMED" && status !== "EXPIRED";

/** The status in Coinbase Commerce's words (its charge timeline's statuses). */
const COINBASE_STATUS: Record<CryptoChargeStatus, string> = {
  NEW: "NEW",
  UNDERPAID: "UNRESOLVED",
  PENDING: "PENDING",
  CONFIRMED: "COMPLETED",
  EXPIRED: "EXPIRED",
};

/** The status in Stripe's PaymentIntent words. */
const STRIPE_STATUS: Record<CryptoChargeStatus, string> = {
  NEW: "requires_action",
  UNDERPAID: "requires_action",
  PENDING: "processing",
  CONFIRMED: "succeeded",
  EXPIRED: "canceled",
};

export const providerStatus = (provider: CryptoProvider, status: CryptoChargeStatus) =>
  provider === "COINBASE" ? COINBASE_STATUS[status] : STRIPE_STATUS[status];
