import { bigint, index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn, updatedAtColumn } from "../../../platform/db/columns.ts";
import { accountIdColumn } from "../../account/tables.ts";
import { invoices } from "../tables.ts";

/**
 * The account's payment method: one per account, replaced by the next. A card's number never reaches
 * this table (it is a secret): the provider keeps what it needs under `providerRef`; we keep the brand,
 * the last four digits and the expiry, or a bank's name and the last four digits of the account.
 */
export const paymentMethods = pgTable("payment_methods", {
  accountId: accountIdColumn().primaryKey(),
  /** The provider that holds the method: builtin or stripe (provider.ts). */
  provider: text("provider").notNull(),
  /** card or bank. */
  kind: text("kind").notNull(),
  brand: text("brand"),
  last4: text("last4").notNull(),
  expMonth: integer("exp_month"),
  expYear: integer("exp_year"),
  bankName: text("bank_name"),
  /** The provider's reference of the method (a Stripe PaymentMethod id; the built-in provider's own). */
  providerRef: text("provider_ref").notNull(),
  updatedAt: updatedAtColumn(3),
});

/**
 * Charges of invoices. Every attempt has an idempotency key, unique per account: a retried request (or
 * two at once) with the same key finds the charge the first made instead of charging again.
 */
export const paymentCharges = pgTable(
  "payment_charges",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    invoiceId: uuid("invoice_id")
      .notNull()
      .references(() => invoices.id, { onDelete: "cascade" }),
    idempotencyKey: text("idempotency_key").notNull(),
    provider: text("provider").notNull(),
    /** The provider's id of the charge (a Stripe PaymentIntent id). */
    providerChargeId: text("provider_charge_id"),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    currency: text("currency").notNull(),
    /**
     * succeeded, failed or requires_action (provider.ts `ChargeOutcome`). requires_action is the pending
     * action (3-D Secure): confirmPayment moves it to succeeded or failed, once.
     */
    status: text("status").notNull(),
    /** Where the payer authenticates a charge in requires_action (Stripe's next_action redirect); null: the console asks. */
    nextActionUrl: text("next_action_url"),
    failureCode: text("failure_code"),
    failureMessage: text("failure_message"),
    /** How the method read when it was charged ("Visa ending 4242"), kept as it was then. */
    methodLabel: text("method_label").notNull(),
    cardLast4: text("card_last4"),
    createdAt: createdAtColumn(3),
  },
  (t) => [
    uniqueIndex("payment_charges_account_key").on(t.accountId, t.idempotencyKey),
    index("payment_charges_account_created").on(t.accountId, t.createdAt),
    index("payment_charges_invoice").on(t.invoiceId),
  ],
);

/** Who is billed: the customer's name, phone, address and business type (updateBillingData). */
export const billingCustomers = pgTable("billing_customers", {
  accountId: accountIdColumn().primaryKey(),
  name: text("name"),
  phone: text("phone"),
  line1: text("line1"),
  line2: text("line2"),
  city: text("city"),
  state: text("state"),
  postalCode: text("postal_code"),
  /** ISO 3166-1 alpha-2. */
  country: text("country"),
  /** COMPANY, GOVERNMENT_ENTITY, INDIVIDUAL or NON_PROFIT. */
  businessType: text("business_type"),
  /** The Stripe customer made for the account, once the Stripe provider has made one. */
  stripeCustomerId: text("stripe_customer_id"),
  updatedAt: updatedAtColumn(3),
});

/** The customer's tax ids, validated per type and country (tax-ids.ts) and printed on invoices. */
export const taxIds = pgTable(
  "tax_ids",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** A type of tax-id-types.json: eu_vat, gb_vat, us_ein, au_abn, … */
    type: text("type").notNull(),
    /** Normalised: upper case, no spaces, dots or dashes but where the type's format keeps them. */
    value: text("value").notNull(),
    /** ISO 3166-1 alpha-2. */
    country: text("country").notNull(),
    createdAt: createdAtColumn(3),
  },
  (t) => [
    uniqueIndex("tax_ids_account_type_value").on(t.accountId, t.type, t.value),
    index("tax_ids_account_created").on(t.accountId, t.createdAt),
  ],
);
