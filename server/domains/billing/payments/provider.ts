/**
 * The one payment provider interface: attach (or replace) a customer's payment method, and charge an
 * invoice with an idempotency key. The built-in provider (builtin.ts) runs here on documented test
 * numbers; the Stripe provider (stripe.ts) is used when a secret key is configured.
 */

/** What the user sent to set a payment method: a card, a bank account, or a provider's token. */
export type PaymentSource =
  | { kind: "card"; number: string; expMonth: number; expYear: number; cvc: string }
  | { kind: "bank"; routingNumber: string; accountNumber: string }
  | { kind: "token"; token: string };

/** The customer as the provider knows them: the account, and the provider's customer id once one exists. */
export interface ProviderCustomer {
  accountId: string;
  email: string;
  name: string | null;
  /** The provider's customer id (Stripe's cus_…), null until the provider made one. */
  customerRef: string | null;
}

/** A method the provider attached: what may be shown of it, and the provider's reference. */
export interface AttachedMethod {
  kind: "card" | "bank";
  brand: string | null;
  last4: string;
  expMonth: number | null;
  expYear: number | null;
  bankName: string | null;
  providerRef: string;
  /** The provider's customer id, when attaching made one. */
  customerRef: string | null;
}

export interface ChargeRequest {
  customer: ProviderCustomer;
  methodRef: string;
  amountCents: number;
  currency: string;
  description: string;
  /** The same key twice is one charge at the provider too (Stripe's Idempotency-Key header). */
  idempotencyKey: string;
}

/** How a charge ended: paid, declined (with the provider's code and words), or waiting for the payer. */
export interface ChargeOutcome {
  status: "succeeded" | "failed" | "requires_action";
  providerChargeId: string | null;
  failureCode: string | null;
  failureMessage: string | null;
  /** Where the payer authenticates, while requires_action (Stripe's next_action.redirect_to_url); null: nowhere to send them. */
  nextActionUrl: string | null;
}

/** What the payer answered their bank's authentication with (Stripe's 3-D Secure test page has these two buttons). */
export type PaymentAuthentication = "COMPLETED" | "FAILED";

/** The confirmation of a charge that asked for the payer's action, once they acted. */
export interface ConfirmRequest {
  customer: ProviderCustomer;
  /** The provider's id of the charge waiting for action (its PaymentIntent). */
  providerChargeId: string;
  /**
   * The payer's answer, where the provider takes it from us (the built-in provider, whose bank page is
   * the console's dialog); null where the payer answers the bank itself (Stripe).
   */
  authentication: PaymentAuthentication | null;
  /** The same key twice is one confirmation at the provider. */
  idempotencyKey: string;
}

export interface PaymentProvider {
  /** builtin or stripe: kept with every method and charge. */
  readonly id: "builtin" | "stripe";
  /** What the console says about it. */
  readonly name: string;
  readonly description: string;
  /** Whether it reaches a real payment network (false for the built-in test provider). */
  readonly connected: boolean;
  /**
   * Attaches `source` to the customer; a source the provider refuses throws BAD_USER_INPUT naming the
   * field (`/card/number`, `/token` …), and nothing is kept.
   */
  attach(customer: ProviderCustomer, source: PaymentSource): Promise<AttachedMethod>;
  charge(request: ChargeRequest): Promise<ChargeOutcome>;
  /**
   * Confirms a charge that answered requires_action: succeeded or failed once the payer acted, or still
   * requires_action (with where to act) while they have not. Confirming a settled charge answers how it settled.
   */
  confirm(request: ConfirmRequest): Promise<ChargeOutcome>;
}
