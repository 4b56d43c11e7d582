import Stripe from "stripe";
import type { StripeSettings } from "../../../platform/config.ts";
import { AppError, badInput } from "../../../platform/errors.ts";
import type { AttachedMethod, ChargeOutcome, ChargeRequest, PaymentProvider, ProviderCustomer } from "./provider.ts";

/** Stripe could not be reached or refused the service's key: the user can only try again later. */
const unreachable = () => new AppError("UPSTREAM_FAILED", "Stripe could not be reached: try again in a moment.");

/** What may be shown of a Stripe PaymentMethod: a card's brand, last four and expiry, or a bank's. */
function shown(method: Stripe.PaymentMethod, customerRef: string): AttachedMethod {
  if (method.card) {
    return {
      kind: "card",
      brand: method.card.brand,
      last4: method.card.last4,
      expMonth: method.card.exp_month,
      expYear: method.card.exp_year,
      bankName: null,
      providerRef: method.id,
      customerRef,
    };
  }
  if (method.us_bank_account) {
    return {
      kind: "bank",
      brand: null,
      last4: method.us_bank_account.last4 ?? "",
      expMonth: null,
      expYear: null,
      bankName: method.us_bank_account.bank_name,
      providerRef: method.id,
      customerRef,
    };
  }
  throw badInput([{ pointer: "/token", message: `Stripe payment methods of type ${method.type} are not taken here.` }]);
}

/**
 * The Stripe provider, on the official client: a method is a Stripe PaymentMethod id (from Stripe.js, or
 * a test id such as pm_card_visa) attached to the account's Stripe customer (made on first use, once: its
 * creation carries an idempotency key of the account); a charge is a PaymentIntent confirmed off-session
 * with the charge's idempotency key. A card error is a decline; an invalid request names `/token`.
 */
export function stripeProvider(settings: StripeSettings): PaymentProvider {
  const url = settings.apiUrl;
  const stripe = new Stripe(settings.secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    ...(url && {
      host: url.hostname,
      port: url.port || (url.protocol === "https:" ? 443 : 80),
      protocol: url.protocol === "https:" ? "https" : "http",
    }),
  });

  async function customerRef(customer: ProviderCustomer): Promise<string> {
    if (customer.customerRef) return customer.customerRef;
    const made = await stripe.customers.create(
      {
        email: customer.email || undefined,
        name: customer.name ?? undefined,
        metadata: { accountId: customer.accountId },
      },
      { idempotencyKey: `customer:${customer.accountId}` },
    );
    return made.id;
  }

  return {
    id: "stripe",
    name: "Stripe",
    description: url
      ? `Stripe's API at ${url.origin}: charges go where that server sends them.`
      : "Stripe: cards and bank accounts are charged for real through your Stripe account.",
    connected: true,

    async attach(customer, source) {
      if (source.kind !== "token") {
        throw badInput([
          {
            pointer: source.kind === "card" ? "/card" : "/bankAccount",
            message:
              "With Stripe, card and bank details go to Stripe's own form: send the PaymentMethod id it gives as the token.",
          },
        ]);
      }
      try {
        const ref = await customerRef(customer);
        const method = await stripe.paymentMethods.attach(source.token, { customer: ref });
        await stripe.customers.update(ref, { invoice_settings: { default_payment_method: method.id } });
        return shown(method, ref);
      } catch (error) {
        if (
          error instanceof Stripe.errors.StripeCardError ||
          error instanceof Stripe.errors.StripeInvalidRequestError
        ) {
          throw badInput([{ pointer: "/token", message: `Stripe: ${error.message}` }]);
        }
        if (error instanceof AppError) throw error;
        throw unreachable();
      }
    },

    async charge(request: ChargeRequest): Promise<ChargeOutcome> {
      try {
        const intent = await stripe.paymentIntents.create(
          {
            amount: request.amountCents,
            currency: request.currency,
            customer: await customerRef(request.customer),
            payment_method: request.methodRef,
            confirm: true,
            off_session: true,
            description: request.description,
            metadata: { accountId: request.customer.accountId },
          },
          { idempotencyKey: request.idempotencyKey },
        );
        if (intent.status === "succeeded") {
          return { status: "succeeded", providerChargeId: intent.id, failureCode: null, failureMessage: null };
        }
        return {
          status: "requires_action",
          providerChargeId: intent.id,
          failureCode: intent.status,
          failureMessage: `Stripe left the payment ${intent.status.replace(/_/g, " ")}.`,
        };
      } catch (error) {
        if (error instanceof Stripe.errors.StripeCardError) {
          const action = error.code === "authentication_required";
          return {
            status: action ? "requires_action" : "failed",
            providerChargeId: error.payment_intent?.id ?? null,
            failureCode: error.code ?? "card_declined",
            failureMessage: error.message,
          };
        }
        throw unreachable();
      }
    },
  };
}
