import { sql } from "drizzle-orm";
import {
  bigint,
  index,
  integer,
  numeric,
  pgSequence,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn, updatedAtColumn } from "../../../platform/db/columns.ts";
import { accountIdColumn } from "../../account/tables.ts";
import { invoices } from "../tables.ts";

/**
 * The derivation index of each charge's deposit address, from one sequence: an address is never given
 * to two charges, so whatever its balance holds was paid to that charge alone.
 */
export const cryptoChargeAddressIndexes = pgSequence("crypto_charge_address_indexes", { startWith: 1 });

const wei = (name: string) => numeric(name, { precision: 78, scale: 0 });

/** The statuses a charge is still watched in (crypto/rules.ts moves them). */
export const OPEN_CHARGE_STATUSES = ["NEW", "UNDERPAID", "PENDING"] as const;

/**
 * Crypto charges: an invoice's amount, in wei at the rate of the moment, asked to be sent to a deposit
 * address of its own on a chain the service reads. The private key of the address is never stored: it
 * is derived from the service's mnemonic when wanted (crypto/addresses.ts).
 */
export const cryptoCharges = pgTable(
  "crypto_charges",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** The code the charge is read by (coinbaseChargeStatus's chargeCode, stripePaymentIntentStatus's id). */
    code: text("code").notNull(),
    /** COINBASE or STRIPE: which of the spec's operations made it, and which vocabulary its status is read in. */
    provider: text("provider").notNull(),
    /** The open invoice it pays; null for a top-up of the account's balance. */
    invoiceId: uuid("invoice_id").references(() => invoices.id, { onDelete: "cascade" }),
    /** The spec's CryptoChargeType: CRYPTO_TOP_UP credits the account's balance; null pays `invoiceId`. */
    type: text("type"),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    network: text("network").notNull(),
    addressIndex: integer("address_index").notNull(),
    address: text("address").notNull(),
    amountWei: wei("amount_wei").notNull(),
    /** The address's balance at the last look (the latest block). */
    receivedWei: wei("received_wei").notNull().default("0"),
    /** NEW, UNDERPAID, PENDING, CONFIRMED or EXPIRED (crypto/rules.ts). */
    status: text("status").notNull(),
    /** The block at which the amount had the confirmations asked for. */
    confirmedBlock: bigint("confirmed_block", { mode: "number" }),
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
    confirmedAt: timestamp("confirmed_at", { withTimezone: true, precision: 3 }),
    createdAt: createdAtColumn(3),
    updatedAt: updatedAtColumn(3),
  },
  (t) => [
    uniqueIndex("crypto_charges_code").on(t.code),
    uniqueIndex("crypto_charges_address_index").on(t.addressIndex),
    index("crypto_charges_account_created").on(t.accountId, t.createdAt),
    // One open charge per invoice: a second ask while one is watched answers that one.
    uniqueIndex("crypto_charges_open_invoice").on(t.invoiceId).where(sql`status in ('NEW', 'UNDERPAID', 'PENDING')`),
    index("crypto_charges_open").on(t.network).where(sql`status in ('NEW', 'UNDERPAID', 'PENDING')`),
  ],
);
