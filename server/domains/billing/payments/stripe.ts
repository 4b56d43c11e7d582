import Stripe from "stripe";
import type { StripeSettings } from "../../../platform/config.ts";
import { AppError, badInput } from "../../../platform/errors.ts";
import type {
  AttachedMethod,
  ChargeOutcome,
  ChargeRequest,
  ConfirmRequest,
  PaymentProvider,
  ProviderCustomer,
} from "./provider.ts";

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
        return outcomeOf(intent);
      } catch (error) {
        if (error instanceof Stripe.errors.StripeCardError) {
          const action = error.code === "authentication_required";
          return {
            status: action ? "requires_action" : "failed",
            providerChargeId: error.payment_intent?.id ?? null,
            failureCode: error.code ?? "card_declined",
            failureMessage: error.message,
            nextActionUrl: null,
          };
        }
        throw unreachable();
      }
    },

    /**
     * An off-session charge Stripe refused with authentication_required is confirmed again, on session,
     * with the method it tried (Stripe then answers requires_action and where the payer authenticates);
     * once the payer acted at their bank, the intent says how it ended. The payer's answer is Stripe's
     * to take, never ours.
     */
    async confirm(request: ConfirmRequest): Promise<ChargeOutcome> {
      if (request.authentication !== null) {
        throw badInput([
          { pointer: "/authentication", message: "With Stripe, you authenticate on your bank's page, not here." },
        ]);
      }
      try {
        let intent = await stripe.paymentIntents.retrieve(request.providerChargeId);
        const tried = intent.last_payment_error;
        if (intent.status === "requires_payment_method" && tried?.code === "authentication_required") {
          intent = await stripe.paymentIntents.confirm(
            intent.id,
            {
              payment_method: tried.payment_method?.id,
              ...(settings.returnUrl && { return_url: settings.returnUrl }),
            },
            { idempotencyKey: request.idempotencyKey },
          );
        }
        return outcomeOf(intent);
      } catch (error) {
        if (error instanceof Stripe.errors.StripeCardError) {
          return {
            status: "failed",
            providerChargeId: request.providerChargeId,
            failureCode: error.code ?? "card_declined",
            failureMessage: error.message,
            nextActionUrl: null,
          };
        }
        throw unreachable();
      }
    },
  };
}

/** A PaymentIntent as a charge's outcome: paid, failed with Stripe's last error, or waiting (with where to act). */
function outcomeOf(intent: Stripe.PaymentIntent): ChargeOutcome {
  if (intent.status === "succeeded") {
    return {
      status: "succeeded",
      providerChargeId: intent.id,
      failureCode: null,
      failureMessage: null,
      nextActionUrl: null,
    };
  }
  if (intent.status === "requires_payment_method" || intent.status === "canceled") {
    return {
      status: "failed",
      providerChargeId: intent.id,
      failureCode: intent.last_payment_error?.code ?? intent.status,
      failureMessage:
        intent.last_payment_error?.message ?? `Stripe left the payment ${intent.status.replace(/_/g, " ")}.`,
      nextActionUrl: null,
    };
  }
  return {
    status: "requires_action",
    providerChargeId: intent.id,
    failureCode: intent.status,
    failureMessage: `Stripe left the payment ${intent.status.replace(/_/g, " ")}.`,
    nextActionUrl: intent.next_action?.redirect_to_url?.url ?? null,
  };
}
