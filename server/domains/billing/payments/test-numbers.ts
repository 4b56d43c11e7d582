/**
 * The built-in provider's test numbers, as Stripe documents its own (stripe.com/docs/testing): a card
 * or bank account that succeeds, one refused when it is attached, one that attaches and then declines
 * every charge, one whose bank asks the payer to act. Listed in docs/payments.md and in the console
 * (query `testPaymentNumbers`); no other number is taken, so no real card is ever entered here.
 */

/** What a test number does when it is attached, and when it is charged. */
export interface TestPaymentNumber {
  /** The built-in provider's reference of a method made from it (`builtin:<id>`). */
  id: string;
  kind: "card" | "bank";
  /** Digits only (a bank's: the account number; its routing number is TEST_ROUTING_NUMBER). */
  number: string;
  brand: string | null;
  /** Refused when attached, with the provider's code and words; null: it attaches. */
  attachDecline: { code: string; message: string } | null;
  /** What a charge to it does. */
  charge: "succeeds" | "declines" | "requires_action";
  /** The code and words of a declined charge. */
  chargeDecline: { code: string; message: string } | null;
  description: string;
}

/** The test bank's routing number (Stripe's ACH test routing number), and its name. */
export const TEST_ROUTING_NUMBER = "110000000";
export const TEST_BANK_NAME = "STRIPE TEST BANK";

const card = (
  id: string,
  number: string,
  brand: string,
  description: string,
  behaviour: Pick<TestPaymentNumber, "attachDecline" | "charge" | "chargeDecline">,
): TestPaymentNumber => ({ id, kind: "card", number, brand, description, ...behaviour });

const SUCCEEDS = { attachDecline: null, charge: "succeeds", chargeDecline: null } as const;
const CARD_DECLINED = { code: "card_declined", message: "Your card was declined." };

export const TEST_PAYMENT_NUMBERS: readonly TestPaymentNumber[] = [
  card("visa", "4242424242424242", "visa", "Visa: every charge succeeds.", SUCCEEDS),
  card("mastercard", "5555555555554444", "mastercard", "Mastercard: every charge succeeds.", SUCCEEDS),
  card("amex", "378282246310005", "amex", "American Express: every charge succeeds.", SUCCEEDS),
  card("declined", "4000000000000002", "visa", "Declined when attached (card_declined): nothing is saved.", {
    attachDecline: CARD_DECLINED,
    charge: "declines",
    chargeDecline: CARD_DECLINED,
  }),
  card(
    "insufficient-funds",
    "4000000000009995",
    "visa",
    "Declined when attached (insufficient_funds): nothing is saved.",
    {
      attachDecline: { code: "insufficient_funds", message: "Your card has insufficient funds." },
      charge: "declines",
      chargeDecline: { code: "insufficient_funds", message: "Your card has insufficient funds." },
    },
  ),
  card(
    "charge-declined",
    "4000000000000341",
    "visa",
    "Attaches, then every charge is declined (card_declined): the subscription becomes past due.",
    { attachDecline: null, charge: "declines", chargeDecline: CARD_DECLINED },
  ),
  card(
    "authentication-required",
    "4000002760003184",
    "visa",
    "Attaches, then every charge asks the payer to authenticate (3-D Secure): the invoice waits until they do.",
    { attachDecline: null, charge: "requires_action", chargeDecline: null },
  ),
  {
    id: "bank",
    kind: "bank",
    number: "000123456789",
    brand: null,
    description: "Bank account: every debit succeeds.",
    ...SUCCEEDS,
  },
  {
    id: "bank-account-closed",
    kind: "bank",
    number: "000111111116",
    brand: null,
    description: "Bank account: attaches, then every debit fails (account_closed).",
    attachDecline: null,
    charge: "declines",
    chargeDecline: { code: "account_closed", message: "The bank account is closed." },
  },
  {
    id: "bank-insufficient-funds",
    kind: "bank",
    number: "000222222227",
    brand: null,
    description: "Bank account: attaches, then every debit fails (insufficient_funds).",
    attachDecline: null,
    charge: "declines",
    chargeDecline: { code: "insufficient_funds", message: "The bank account has insufficient funds." },
  },
];

/** The Luhn check every card number carries in its last digit. */
export function luhnValid(digits: string): boolean {
  if (!/^[0-9]{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The ABA checksum of a US routing number: 3·7·1 weights over its nine digits, a multiple of ten. */
export function routingNumberValid(digits: string): boolean {
  if (!/^[0-9]{9}$/.test(digits)) return false;
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  return weights.reduce((sum, w, i) => sum + w * Number(digits[i]), 0) % 10 === 0;
}

export const testNumberById = (id: string) => TEST_PAYMENT_NUMBERS.find((t) => t.id === id);
export const testNumberOf = (kind: "card" | "bank", digits: string) =>
  TEST_PAYMENT_NUMBERS.find((t) => t.kind === kind && t.number === digits);
