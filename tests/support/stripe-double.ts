import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for the few endpoints of Stripe's API the Stripe provider calls (tests only: Stripe cannot be
 * reached from here). It answers as Stripe documents, for Stripe's test PaymentMethod ids, and keeps
 * Stripe's idempotency: a request with a key it saw answers the first response again. Its PaymentIntents
 * keep their state: one confirmed on session that asks for authentication sends the payer to a bank page
 * here (`/bank/authenticate/<intent>/complete` or `/fail`, Stripe's 3-D Secure test page's two buttons).
 */

/** Stripe's test PaymentMethod ids, and what each does. */
const METHODS: Record<
  string,
  { brand: string; last4: string; attach: "ok" | "declined"; charge: "ok" | "declined" | "auth" }
> = {
  pm_card_visa: { brand: "visa", last4: "4242", attach: "ok", charge: "ok" },
  pm_card_mastercard: { brand: "mastercard", last4: "4444", attach: "ok", charge: "ok" },
  pm_card_visa_chargeDeclined: { brand: "visa", last4: "0002", attach: "declined", charge: "declined" },
  pm_card_chargeCustomerFail: { brand: "visa", last4: "0341", attach: "ok", charge: "declined" },
  pm_card_authenticationRequired: { brand: "visa", last4: "3184", attach: "ok", charge: "auth" },
};

export interface StripeRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  body: URLSearchParams;
}

export interface StripeDouble {
  url: string;
  requests: StripeRequest[];
  /** PaymentIntents made (a replayed key makes none). */
  intents: { id: string; amount: number; customer: string; paymentMethod: string; idempotencyKey: string }[];
  close(): Promise<void>;
}

/** A PaymentIntent as the double keeps it: what Stripe answers for it, moved by confirm and the bank's page. */
interface IntentState {
  id: string;
  object: "payment_intent";
  status: string;
  amount: number;
  last_payment_error: { code: string; message: string; payment_method: { id: string } } | null;
  next_action: { type: "redirect_to_url"; redirect_to_url: { url: string; return_url: string | null } } | null;
}

const cardError = (code: string, message: string, intent: IntentState) => ({
  status: 402,
  body: {
    error: {
      type: "card_error",
      code,
      message,
      decline_code: code === "card_declined" ? "generic_decline" : undefined,
      payment_intent: intent,
    },
  },
});

export async function startStripeDouble(): Promise<StripeDouble> {
  const requests: StripeRequest[] = [];
  const intents: StripeDouble["intents"] = [];
  const replies = new Map<string, { status: number; body: unknown }>();
  const attached = new Map<string, string>();
  const states = new Map<string, IntentState>();
  let base = "";
  let counter = 0;
  const id = (prefix: string) => `${prefix}_double${++counter}`;

  const answer = (path: string, body: URLSearchParams, key: string | undefined): { status: number; body: unknown } => {
    if (path === "/v1/customers") return { status: 200, body: { id: id("cus"), object: "customer" } };
    const customer = /^\/v1\/customers\/([^/]+)$/.exec(path);
    if (customer) return { status: 200, body: { id: customer[1], object: "customer" } };
    const attach = /^\/v1\/payment_methods\/([^/]+)\/attach$/.exec(path);
    if (attach) {
      const method = METHODS[attach[1]];
      if (!method) {
        return {
          status: 400,
          body: {
            error: {
              type: "invalid_request_error",
              code: "resource_missing",
              param: "payment_method",
              message: `No such PaymentMethod: '${attach[1]}'`,
            },
          },
        };
      }
      if (method.attach === "declined") {
        return {
          status: 402,
          body: { error: { type: "card_error", code: "card_declined", message: "Your card was declined." } },
        };
      }
      const pm = id("pm");
      attached.set(pm, attach[1]);
      return {
        status: 200,
        body: {
          id: pm,
          object: "payment_method",
          type: "card",
          customer: body.get("customer"),
          card: { brand: method.brand, last4: method.last4, exp_month: 12, exp_year: 2034 },
        },
      };
    }
    if (path === "/v1/payment_intents") {
      const paymentMethod = body.get("payment_method") ?? "";
      const test = METHODS[attached.get(paymentMethod) ?? ""];
      const intent: IntentState = {
        id: id("pi"),
        object: "payment_intent",
        status: "succeeded",
        amount: Number(body.get("amount")),
        last_payment_error: null,
        next_action: null,
      };
      states.set(intent.id, intent);
      intents.push({
        id: intent.id,
        amount: intent.amount,
        customer: body.get("customer") ?? "",
        paymentMethod,
        idempotencyKey: key ?? "",
      });
      const refused = (code: string, message: string) => {
        intent.status = "requires_payment_method";
        intent.last_payment_error = { code, message, payment_method: { id: paymentMethod } };
        return cardError(code, message, intent);
      };
      if (!test) return refused("card_declined", "No such payment method.");
      if (test.charge === "declined") return refused("card_declined", "Your card was declined.");
      if (test.charge === "auth") return refused("authentication_required", "This payment requires authentication.");
      return { status: 200, body: intent };
    }
    const intentPath = /^\/v1\/payment_intents\/([^/]+)(\/confirm)?$/.exec(path);
    const intent = intentPath ? states.get(intentPath[1]) : undefined;
    if (intentPath && !intent) {
      return {
        status: 404,
        body: { error: { type: "invalid_request_error", code: "resource_missing", message: "No such payment_intent" } },
      };
    }
    if (intent && !intentPath?.[2]) return { status: 200, body: intent };
    if (intent) {
      // Confirmed on session: a card that asks for authentication sends the payer to its bank's page.
      const test = METHODS[attached.get(body.get("payment_method") ?? "") ?? ""];
      if (intent.status !== "requires_payment_method") return { status: 200, body: intent };
      if (test?.charge === "auth") {
        intent.status = "requires_action";
        intent.next_action = {
          type: "redirect_to_url",
          redirect_to_url: { url: `${base}/bank/authenticate/${intent.id}`, return_url: body.get("return_url") },
        };
      } else if (test?.charge === "ok") {
        intent.status = "succeeded";
        intent.last_payment_error = null;
      }
      return { status: 200, body: intent };
    }
    const bank = /^\/bank\/authenticate\/([^/]+)\/(complete|fail)$/.exec(path);
    const authenticated = bank ? states.get(bank[1]) : undefined;
    if (authenticated?.status === "requires_action") {
      // The payer's answer on the bank's page (Stripe's 3-D Secure test page: complete or fail).
      const method = authenticated.last_payment_error?.payment_method ?? { id: "" };
      authenticated.next_action = null;
      if (bank?.[2] === "complete") {
        authenticated.status = "succeeded";
        authenticated.last_payment_error = null;
      } else {
        authenticated.status = "requires_payment_method";
        authenticated.last_payment_error = {
          code: "payment_intent_authentication_failure",
          message:
            "The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.",
          payment_method: method,
        };
      }
      return { status: 200, body: { id: authenticated.id, status: authenticated.status } };
    }
    return {
      status: 404,
      body: { error: { type: "invalid_request_error", message: `Unrecognized request URL (${path})` } },
    };
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      const path = new URL(req.url ?? "/", "http://double").pathname;
      const key = req.headers["idempotency-key"] as string | undefined;
      requests.push({
        method: req.method ?? "",
        path,
        authorization: req.headers.authorization,
        idempotencyKey: key,
        body,
      });
      const replayed = key ? replies.get(`${path} ${key}`) : undefined;
      const reply = replayed ?? answer(path, body, key);
      if (key && !replayed) replies.set(`${path} ${key}`, reply);
      res.writeHead(reply.status, { "content-type": "application/json", "request-id": id("req") });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    intents,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
