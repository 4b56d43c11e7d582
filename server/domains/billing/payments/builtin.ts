import { randomUUID } from "node:crypto";
import { badInput, conflict } from "../../../platform/errors.ts";
import type {
  AttachedMethod,
  ChargeOutcome,
  ChargeRequest,
  ConfirmRequest,
  PaymentProvider,
  PaymentSource,
} from "./provider.ts";
import {
  luhnValid,
  routingNumberValid,
  TEST_BANK_NAME,
  TEST_ROUTING_NUMBER,
  testNumberById,
  testNumberOf,
} from "./test-numbers.ts";

const PREFIX = "builtin:";
/** The built-in provider's charge ids. */
const CHARGE_PREFIX = "builtin_ch_";

/** The card's expiry as a month count, to compare with today's. */
const monthIndex = (year: number, month: number) => year * 12 + (month - 1);

/**
 * The built-in provider: cards and bank accounts with the documented test numbers (test-numbers.ts),
 * each doing what its entry says. It keeps nothing of a number but which test number it was: its
 * method reference is `builtin:<test number id>`. Charges are recorded by the payments service, which
 * holds the idempotency keys for every provider.
 */
export function builtinProvider(now: () => Date = () => new Date()): PaymentProvider {
  return {
    id: "builtin",
    name: "Built-in test provider",
    description:
      "No payment network is connected: cards and bank accounts take only the documented test numbers, and no money moves.",
    connected: false,

    async attach(_customer, source: PaymentSource): Promise<AttachedMethod> {
      if (source.kind === "token") {
        throw badInput([
          {
            pointer: "/token",
            message: "The built-in test provider takes a card or a bank account, not a token: a token is Stripe's.",
          },
        ]);
      }
      if (source.kind === "card") {
        const digits = source.number.replace(/[ -]/g, "");
        if (!luhnValid(digits)) {
          throw badInput([
            { pointer: "/card/number", message: "This is not a card number: its check digit is wrong." },
          ]);
        }
        const test = testNumberOf("card", digits);
        if (!test) {
          throw badInput([
            {
              pointer: "/card/number",
              message:
                "The built-in test provider takes only its test numbers (shown on this page): never a real card.",
            },
          ]);
        }
        const today = now();
        if (monthIndex(source.expYear, source.expMonth) < monthIndex(today.getUTCFullYear(), today.getUTCMonth() + 1)) {
          throw badInput([
            {
              pointer: "/card/expYear",
              message: `This card expired in ${String(source.expMonth).padStart(2, "0")}/${source.expYear}.`,
            },
          ]);
        }
        if (test.attachDecline) {
          throw badInput([
            { pointer: "/card/number", message: `${test.attachDecline.message} (${test.attachDecline.code})` },
          ]);
        }
        return {
          kind: "card",
          brand: test.brand,
          last4: digits.slice(-4),
          expMonth: source.expMonth,
          expYear: source.expYear,
          bankName: null,
          providerRef: `${PREFIX}${test.id}`,
          customerRef: null,
        };
      }
      if (!routingNumberValid(source.routingNumber)) {
        throw badInput([{ pointer: "/bankAccount/routingNumber", message: "This is not a US routing number." }]);
      }
      const test =
        source.routingNumber === TEST_ROUTING_NUMBER ? testNumberOf("bank", source.accountNumber) : undefined;
      if (!test) {
        throw badInput([
          {
            pointer: "/bankAccount/accountNumber",
            message: `The built-in test provider takes only its test accounts at routing number ${TEST_ROUTING_NUMBER}.`,
          },
        ]);
      }
      return {
        kind: "bank",
        brand: null,
        last4: source.accountNumber.slice(-4),
        expMonth: null,
        expYear: null,
        bankName: TEST_BANK_NAME,
        providerRef: `${PREFIX}${test.id}`,
        customerRef: null,
      };
    },

    async charge(request: ChargeRequest): Promise<ChargeOutcome> {
      const test = request.methodRef.startsWith(PREFIX) ? testNumberById(request.methodRef.slice(PREFIX.length)) : null;
      if (!test) {
        // A method another provider attached (Stripe's, before its key was removed) cannot be charged here.
        return {
          status: "failed",
          providerChargeId: null,
          failureCode: "provider_mismatch",
          failureMessage: "This payment method belongs to another provider: add it again.",
          nextActionUrl: null,
        };
      }
      const providerChargeId = `${CHARGE_PREFIX}${randomUUID()}`;
      if (test.charge === "succeeds") {
        return { status: "succeeded", providerChargeId, failureCode: null, failureMessage: null, nextActionUrl: null };
      }
      if (test.charge === "requires_action") {
        return {
          status: "requires_action",
          providerChargeId,
          failureCode: "authentication_required",
          failureMessage:
            "The card's bank asks you to authenticate this payment: open the invoice's authentication on the billing page.",
          nextActionUrl: null,
        };
      }
      return {
        status: "failed",
        providerChargeId,
        failureCode: test.chargeDecline?.code ?? "card_declined",
        failureMessage: test.chargeDecline?.message ?? "The payment was declined.",
        nextActionUrl: null,
      };
    },

    /**
     * The test bank's authentication: the console's dialog stands for the bank's page, so the payer's
     * answer comes with the request, as Stripe's test page's "Complete" and "Fail" buttons. A failure is
     * Stripe's payment_intent_authentication_failure. Which charges wait for it the payments service
     * knows (their rows), and it asks here once per charge.
     */
    async confirm(request: ConfirmRequest): Promise<ChargeOutcome> {
      if (!request.providerChargeId.startsWith(CHARGE_PREFIX)) {
        throw conflict("This charge was made by another provider: pay the invoice again.");
      }
      if (request.authentication === null) {
        throw badInput([
          {
            pointer: "/authentication",
            message: "The built-in test provider's bank asks you to complete or fail the authentication.",
          },
        ]);
      }
      if (request.authentication === "COMPLETED") {
        return {
          status: "succeeded",
          providerChargeId: request.providerChargeId,
          failureCode: null,
          failureMessage: null,
          nextActionUrl: null,
        };
      }
      return {
        status: "failed",
        providerChargeId: request.providerChargeId,
        failureCode: "payment_intent_authentication_failure",
        failureMessage: "The payment's authentication failed.",
        nextActionUrl: null,
      };
    },
  };
}
