import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for the few endpoints of Stripe's API the Stripe provider calls (tests only: Stripe cannot be
 * reached from here). It answers as Stripe documents, for Stripe's test PaymentMethod ids, and keeps
 * Stripe's idempotency: a request with a key it saw answers the first response again.
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

const cardError = (code: string, message: string, intentId: string, status: string) => ({
  status: 402,
  body: {
    error: {
      type: "card_error",
      code,
      message,
      decline_code: code === "card_declined" ? "generic_decline" : undefined,
      payment_intent: { id: intentId, object: "payment_intent", status },
    },
  },
});

export async function startStripeDouble(): Promise<StripeDouble> {
  const requests: StripeRequest[] = [];
  const intents: StripeDouble["intents"] = [];
  const replies = new Map<string, { status: number; body: unknown }>();
  const attached = new Map<string, string>();
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
      const test = METHODS[attached.get(body.get("payment_method") ?? "") ?? ""];
      const intentId = id("pi");
      intents.push({
        id: intentId,
        amount: Number(body.get("amount")),
        customer: body.get("customer") ?? "",
        paymentMethod: body.get("payment_method") ?? "",
        idempotencyKey: key ?? "",
      });
      if (!test) return cardError("card_declined", "No such payment method.", intentId, "requires_payment_method");
      if (test.charge === "declined")
        return cardError("card_declined", "Your card was declined.", intentId, "requires_payment_method");
      if (test.charge === "auth") {
        return cardError(
          "authentication_required",
          "This payment requires authentication.",
          intentId,
          "requires_payment_method",
        );
      }
      return {
        status: 200,
        body: { id: intentId, object: "payment_intent", status: "succeeded", amount: Number(body.get("amount")) },
      };
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
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    intents,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
