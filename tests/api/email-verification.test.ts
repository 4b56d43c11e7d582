import { request as httpRequest } from "node:http";
import { createServer, type Server } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendVerificationEmail } from "../../server/domains/account/verification.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { createMailer } from "../../server/platform/mail.ts";
import { type GqlClient, signUp, type TestUser, uniqueEmail, useTestApp } from "../support/api.ts";

const ctx = useTestApp();
let db: pg.Client;

beforeAll(async () => {
  db = new pg.Client({ connectionString: ctx.app.database.url });
  await db.connect();
});
afterAll(() => db.end());

const RESEND = "mutation { resendVerificationEmail { success message error } }";
const VERIFY = "mutation($token: String!) { verifyEmail(token: $token) { success message error } }";

interface Result {
  success: boolean;
  message: string | null;
  error: string | null;
}

/** The newest verification mail to an address, from the outbox. */
async function latestMail(email: string) {
  const { rows } = await db.query<{ subject: string; body: string }>(
    'SELECT subject, body FROM mail_outbox WHERE "to" = $1 ORDER BY created_at DESC LIMIT 1',
    [email],
  );
  expect(rows[0]?.subject).toBe("Verify your e-mail address for Nodeplane");
  return rows[0].body;
}

async function linkIn(email: string) {
  const link = (await latestMail(email)).match(/https?:\/\/\S+/)?.[0];
  if (!link) throw new Error("The verification mail has no link");
  return new URL(link);
}

async function isVerified(user: TestUser) {
  const { viewer } = await user.client.gqlOk<{ viewer: { isVerified: boolean } }>("{ viewer { isVerified } }");
  return viewer.isVerified;
}

async function verify(client: GqlClient, token: string) {
  return (await client.gqlOk<{ verifyEmail: Result }>(VERIFY, { token })).verifyEmail;
}

async function resend(user: TestUser) {
  return (await user.client.gqlOk<{ resendVerificationEmail: Result }>(RESEND)).resendVerificationEmail;
}

/** Forgets the one-a-minute resend count, as a minute passing would. */
const forgetLastMinute = () => db.query("DELETE FROM sign_in_limits WHERE key LIKE 'verify-mail-minute:%'");

describe("e-mail verification", () => {
  it("sign-up mails a link to the console that verifies the address, once", async () => {
    const user = await signUp(ctx.app);
    expect(await isVerified(user)).toBe(false);
    const link = await linkIn(user.email);
    expect(`${link.origin}${link.pathname}`).toBe(`${ctx.app.url}/verify-email`);
    const token = link.searchParams.get("token") ?? "";
    expect(token.length).toBeGreaterThanOrEqual(40);
    const { rows } = await db.query("SELECT token_hash FROM email_verifications WHERE token_hash = $1", [token]);
    expect(rows).toHaveLength(0);

    // The page is served to anyone as the sign-in page is: the console's own route.
    const signedOut = user.client.fresh();
    expect((await signedOut.request(`${link.pathname}${link.search}`)).status).toBe(
      (await signedOut.request("/sign-in")).status,
    );

    const verified = await verify(user.client.fresh(), token);
    expect(verified).toEqual({ success: true, message: `${user.email} is verified.`, error: null });
    expect(await isVerified(user)).toBe(true);

    const again = await verify(user.client, token);
    expect(again.success).toBe(false);
    expect(again.error).toMatch(/not valid or was used already.*Resend email/);
  });

  it("a sign-up sent with a forged Host header mails a link to the service, never to that host", async () => {
    const email = uniqueEmail("forged-host");
    const body = JSON.stringify({
      query: "mutation($input: SignUpInput!) { signUp(input: $input) { id } }",
      variables: { input: { email, password: "a-long-enough-password" } },
    });
    const service = new URL(ctx.app.url);
    const status = await new Promise<number>((resolve, reject) => {
      const sent = httpRequest(
        {
          host: service.hostname,
          port: service.port,
          path: "/graphql",
          method: "POST",
          headers: { host: "attacker.example", "content-type": "application/json" },
        },
        (response) => {
          response.resume();
          response.on("end", () => resolve(response.statusCode ?? 0));
        },
      );
      sent.on("error", reject);
      sent.end(body);
    });
    expect(status).toBe(200);
    const link = await linkIn(email);
    expect(link.hostname).toBe("localhost");
    expect(link.pathname).toBe("/verify-email");
  });

  it("refuses an unknown token and an expired one, saying how to get a new link", async () => {
    const user = await signUp(ctx.app);
    const unknown = await verify(user.client, "not-a-token");
    expect(unknown).toMatchObject({ success: false, error: expect.stringMatching(/not valid.*new link/) });

    const token = (await linkIn(user.email)).searchParams.get("token") ?? "";
    await db.query("UPDATE email_verifications SET expires_at = now() - interval '1 second' WHERE user_id = $1", [
      user.viewer.userId,
    ]);
    const expired = await verify(user.client, token);
    expect(expired).toMatchObject({ success: false, error: expect.stringMatching(/expired.*new link/) });
    expect(await isVerified(user)).toBe(false);
  });

  it("limits failed token checks from one address to 30 an hour; a valid link does not count", async () => {
    const user = await signUp(ctx.app);
    const token = (await linkIn(user.email)).searchParams.get("token") ?? "";
    const client = user.client.fresh();
    // Every test here checks tokens from the same address: this one starts and ends with its count empty.
    const forgetTokenChecks = () => db.query("DELETE FROM sign_in_limits WHERE key LIKE 'token-checks:%'");
    await forgetTokenChecks();
    try {
      expect((await verify(client, token)).success).toBe(true);
      const guesses = await Promise.all(
        Array.from({ length: 35 }, (_, i) => client.gql<{ verifyEmail: Result }>(VERIFY, { token: `guess-${i}` })),
      );
      const refused = guesses.filter((r) => r.errors?.[0].extensions?.code === "RATE_LIMITED");
      expect(guesses.filter((r) => r.data?.verifyEmail.success === false)).toHaveLength(30);
      expect(refused).toHaveLength(5);
      expect(refused[0].errors?.[0].message).toMatch(
        /^Too many links checked from this address\. Try again in \d+ minutes?\.$/,
      );
    } finally {
      await forgetTokenChecks();
    }
  });

  it("a link verifies only the user it was made for", async () => {
    const alice = await signUp(ctx.app);
    const bob = await signUp(ctx.app);
    const alicesToken = (await linkIn(alice.email)).searchParams.get("token") ?? "";
    const answer = await verify(bob.client, alicesToken);
    expect(answer.message).toBe(`${alice.email} is verified.`);
    expect(await isVerified(bob)).toBe(false);
    expect(await isVerified(alice)).toBe(true);
    // Bob's own link still works for Bob.
    const bobsToken = (await linkIn(bob.email)).searchParams.get("token") ?? "";
    expect((await verify(bob.client, bobsToken)).success).toBe(true);
    expect(await isVerified(bob)).toBe(true);
  });

  it("resend mails a new link that replaces the old one", async () => {
    const user = await signUp(ctx.app);
    const first = (await linkIn(user.email)).searchParams.get("token") ?? "";
    const answer = await resend(user);
    expect(answer.success).toBe(true);
    // No SMTP_URL in the tests: the message says where the mail is.
    expect(answer.message).toMatch(/outbox: e-mail is not connected/);
    const second = (await linkIn(user.email)).searchParams.get("token") ?? "";
    expect(second).not.toBe(first);
    expect((await verify(user.client, first)).success).toBe(false);
    expect((await verify(user.client, second)).success).toBe(true);
  });

  it("resend is refused once verified", async () => {
    const user = await signUp(ctx.app);
    await verify(user.client, (await linkIn(user.email)).searchParams.get("token") ?? "");
    expect(await resend(user)).toEqual({
      success: false,
      message: null,
      error: "Your e-mail address is verified already.",
    });
  });

  it("resend is limited to one a minute and five an hour, saying when to try again", async () => {
    const user = await signUp(ctx.app);
    expect((await resend(user)).success).toBe(true);
    const soon = await resend(user);
    expect(soon).toMatchObject({
      success: false,
      error: expect.stringMatching(/less than a minute ago\. Try again in \d+ seconds?\./),
    });
    for (let sent = 1; sent < 5; sent++) {
      await forgetLastMinute();
      expect((await resend(user)).success).toBe(true);
    }
    await forgetLastMinute();
    const hourly = await resend(user);
    expect(hourly).toMatchObject({
      success: false,
      error: expect.stringMatching(/limited to 5 an hour\. Try again in \d+ minutes?\./),
    });
    const { rows } = await db.query('SELECT count(*)::int AS n FROM mail_outbox WHERE "to" = $1', [user.email]);
    expect(rows[0].n).toBe(6);
  });
});

/** The least SMTP server nodemailer sends to: accepts every message and keeps its data. */
async function smtpReceiver() {
  const messages: string[] = [];
  const server: Server = createServer((socket) => {
    let data: string | null = null;
    let buffered = "";
    socket.write("220 test ESMTP\r\n");
    socket.on("data", (chunk) => {
      buffered += chunk.toString("utf8");
      for (;;) {
        if (data !== null) {
          const end = buffered.indexOf("\r\n.\r\n");
          if (end < 0) return;
          messages.push(data + buffered.slice(0, end));
          buffered = buffered.slice(end + 5);
          data = null;
          socket.write("250 queued\r\n");
          continue;
        }
        const line = buffered.indexOf("\r\n");
        if (line < 0) return;
        const command = buffered.slice(0, line).toUpperCase();
        buffered = buffered.slice(line + 2);
        if (command.startsWith("DATA")) {
          data = "";
          socket.write("354 go on\r\n");
        } else if (command.startsWith("QUIT")) socket.end("221 bye\r\n");
        else socket.write("250 ok\r\n");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no SMTP address");
  return { url: `smtp://127.0.0.1:${address.port}`, messages, close: () => server.close() };
}

describe("a verification e-mail sent over SMTP", () => {
  it("carries the link, and the outbox keeps the message without it", async () => {
    const user = await signUp(ctx.app);
    const smtp = await smtpReceiver();
    const pool = openDatabase(ctx.app.database.url, 2);
    try {
      const mailer = createMailer(pool, { smtpUrl: smtp.url });
      await sendVerificationEmail(
        pool,
        { mailer, consoleUrl: "https://console.example" },
        { accountId: user.viewer.id, userId: user.viewer.userId, email: user.email },
      );
      expect(smtp.messages).toHaveLength(1);
      // Quoted-printable folds long lines and writes "=" as =3D: undone before reading the link.
      const sent = (smtp.messages[0] ?? "").replace(/=\r\n/g, "").replace(/=3D/g, "=");
      const token = sent.match(/https:\/\/console\.example\/verify-email\?token=([\w-]+)/)?.[1] ?? "";
      expect(token).not.toBe("");
      const kept = await latestMail(user.email);
      expect(kept).not.toContain(token);
      expect(kept).toContain(`(the link was e-mailed to ${user.email}; it is not kept here)`);
      expect((await verify(user.client, token)).success).toBe(true);
    } finally {
      smtp.close();
      await pool.$client.end();
    }
  });
});
