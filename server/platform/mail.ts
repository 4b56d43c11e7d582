import { and, count, desc, eq, gt } from "drizzle-orm";
import { index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import type { Transporter } from "nodemailer";
import type { Logger } from "pino";
import type { Executor } from "./db/index.ts";
import { pageSize } from "./paging.ts";

/**
 * Notification e-mail. With `SMTP_URL` (e.g. smtp://user:pass@host:587) messages go out over SMTP
 * through nodemailer; every message is also recorded in `mail_outbox`, with `sent_at` set when SMTP
 * accepted it. Without SMTP the outbox is where they stay, and the console shows it, saying that
 * e-mail is not connected.
 */
export const mailOutbox = pgTable(
  "mail_outbox",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: uuid("account_id").notNull(),
    to: text("to").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    /** When SMTP accepted it; null while it sits in the outbox. */
    sentAt: timestamp("sent_at", { withTimezone: true }),
    error: text("error"),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index("mail_outbox_account_created").on(t.accountId, t.createdAt)],
);

export interface MailMessage {
  accountId: string;
  to: string;
  subject: string;
  text: string;
  /**
   * What the outbox keeps instead of `text` once SMTP accepted the message: the text without its secret
   * (a verification link), since every member of the account reads the outbox. A message not sent keeps
   * `text`, as the outbox is then the only way to it.
   */
  keptText?: string;
}

export interface Mailer {
  /** True when messages really leave (SMTP configured). */
  readonly connected: boolean;
  send(message: MailMessage): Promise<void>;
}

export const MAIL_FROM = "Nodeplane <notifications@nodeplane.local>";

/**
 * Notification e-mails one account may send in an hour. Their addresses are the account's to choose
 * (a stream's notificationEmail) and a failure can be made at will, so without a bound the service
 * would mail anyone, as often as asked. Past it a message is kept in the outbox, not sent.
 */
export const NOTIFICATIONS_PER_HOUR = 20;

export function createMailer(
  db: Executor,
  options: { smtpUrl?: string | null; from?: string; log?: Logger } = {},
): Mailer {
  const smtpUrl = options.smtpUrl;
  // nodemailer loads with the first message sent: a start without mail to send does not pay for it.
  let transport: Promise<Transporter> | undefined;
  const smtp = smtpUrl
    ? () => {
        transport ??= import("nodemailer").then(({ default: nodemailer }) => nodemailer.createTransport(smtpUrl));
        return transport;
      }
    : null;
  return {
    connected: smtp !== null,
    async send(message) {
      let sentAt: Date | null = null;
      let error: string | null = null;
      // Counted before sending: messages sent at the same moment may pass the bound by a few.
      const [{ sent }] = await db
        .select({ sent: count() })
        .from(mailOutbox)
        .where(
          and(eq(mailOutbox.accountId, message.accountId), gt(mailOutbox.createdAt, new Date(Date.now() - 3_600_000))),
        );
      if (smtp && sent >= NOTIFICATIONS_PER_HOUR) {
        error = `Not sent: the account's notification e-mails are limited to ${NOTIFICATIONS_PER_HOUR} an hour.`;
      } else if (smtp) {
        try {
          await (await smtp()).sendMail({
            from: options.from ?? MAIL_FROM,
            to: message.to,
            subject: message.subject,
            text: message.text,
          });
          sentAt = new Date();
        } catch (e) {
          error = e instanceof Error ? e.message : String(e);
          options.log?.warn({ err: error }, "notification e-mail was not accepted by SMTP; kept in the outbox");
        }
      }
      await db.insert(mailOutbox).values({
        accountId: message.accountId,
        to: message.to,
        subject: message.subject,
        body: sentAt && message.keptText !== undefined ? message.keptText : message.text,
        sentAt,
        error,
      });
    },
  };
}

export async function listOutbox(db: Executor, accountId: string, limit?: number) {
  return db
    .select()
    .from(mailOutbox)
    .where(eq(mailOutbox.accountId, accountId))
    .orderBy(desc(mailOutbox.createdAt))
    .limit(pageSize(limit, { fallback: 50, max: 200 }));
}
