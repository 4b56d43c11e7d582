import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/platform/db/index.ts";
import { createMailer, listOutbox, NOTIFICATIONS_PER_HOUR } from "../../server/platform/mail.ts";
import { useTestApp } from "../support/api.ts";

// The API, the RPC proxy and their HTTP routes against a hostile client: what an attack found open.
// (What was already refused is tested beside its feature; functions and the key-value store in
// attack-functions-kv.test.ts.)

const ctx = useTestApp();

describe("an RPC path with malformed percent-encoding", () => {
  it("is answered as naming no endpoint, over node:http and the fast lane, and the service goes on", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    const answers = [
      await fetch(`${ctx.app.url}/rpc/%ZZ`),
      await fetch(`${ctx.app.url}/rpc/%E0%A4%A`, { method: "POST", body: call }),
      await fetch(`${ctx.app.url}/rpc/abc/%ZZ`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: call,
      }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeLessThan(500);
      expect(((await answer.json()) as { error?: { message: string } }).error?.message).toBeTruthy();
    }
    expect((await fetch(`${ctx.app.url}/healthz`)).status).toBe(200);
  });
});

describe("notification e-mail to addresses an account chooses", () => {
  it("is sent at most NOTIFICATIONS_PER_HOUR times an hour per account; the rest stay in the outbox", async () => {
    const db = openDatabase(ctx.app.database.url, 2);
    try {
      // A closed port: every message that is really sent fails to connect, and says so.
      const mailer = createMailer(db, { smtpUrl: "smtp://127.0.0.1:9" });
      const accountId = randomUUID();
      for (let i = 0; i <= NOTIFICATIONS_PER_HOUR; i++) {
        await mailer.send({ accountId, to: `victim-${i}@example.com`, subject: "Your stream was paused", text: "…" });
      }
      const outbox = await listOutbox(db, accountId, 200);
      const notSent = outbox.filter((m) => m.error?.startsWith("Not sent:"));
      expect(outbox.length).toBe(NOTIFICATIONS_PER_HOUR + 1);
      expect(notSent.map((m) => m.to)).toEqual([`victim-${NOTIFICATIONS_PER_HOUR}@example.com`]);
      expect(outbox.every((m) => m.sentAt === null)).toBe(true);
    } finally {
      await db.$client.end();
    }
  }, 60_000);
});
