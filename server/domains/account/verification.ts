import { hash, randomBytes } from "node:crypto";
import { getTableName } from "drizzle-orm";
import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import type { Db } from "../../platform/db/index.ts";
import { foundOr, notFound } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import type { Mailer } from "../../platform/mail.ts";
import type { SignInGuard } from "./sign-in-guard.ts";
import * as store from "./store.ts";
import { signInLimits } from "./tables.ts";

/** How long a verification link works. */
export const VERIFICATION_LINK_HOURS = 24;
/** Resent verification e-mails a user may ask for: one a minute, and this many an hour. */
export const RESENDS_PER_HOUR = 5;

/** The console page a verification link opens. */
export const VERIFY_EMAIL_PATH = "/verify-email";

const tokenHashOf = (token: string) => hash("sha256", token, "hex");

const NEW_LINK_ADVICE = "Sign in and choose Resend email in the banner to get a new link.";

/** Where a user's mail and a link to the console come from. */
export interface VerificationMail {
  mailer: Mailer;
  /** The console's base URL: PUBLIC_URL or the request's origin. */
  consoleUrl: string;
}

/** Makes the user a new link (replacing any older one) and mails it to their address. */
export async function sendVerificationEmail(
  db: Db,
  mail: VerificationMail,
  user: { accountId: string; userId: string; email: string },
) {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + VERIFICATION_LINK_HOURS * 3_600_000);
  const replaced = await store.replaceEmailVerification(db, user.accountId, user.userId, {
    tokenHash: tokenHashOf(token),
    expiresAt,
  });
  if (!replaced) throw notFound("The user");
  const page = `${mail.consoleUrl}${VERIFY_EMAIL_PATH}`;
  const text = (link: string) =>
    [
      "Open this link to verify your e-mail address for Nodeplane:",
      "",
      link,
      "",
      `The link works once, for ${VERIFICATION_LINK_HOURS} hours. If you did not sign up for Nodeplane, ignore this message.`,
    ].join("\n");
  await mail.mailer.send({
    accountId: user.accountId,
    to: user.email,
    subject: "Verify your e-mail address for Nodeplane",
    text: text(`${page}?token=${token}`),
    keptText: text(`(the link was e-mailed to ${user.email}; it is not kept here)`),
  });
}

/** The resend counters, beside the sign-in ones in sign_in_limits; one pair per service (the account plugin makes it). */
export class ResendLimits {
  readonly minute: RateLimiterPostgres;
  readonly hour: RateLimiterPostgres;

  constructor(db: Db) {
    const limiter = (keyPrefix: string, points: number, duration: number) =>
      new RateLimiterPostgres({
        storeClient: db.$client,
        tableName: getTableName(signInLimits),
        tableCreated: true,
        keyPrefix,
        points,
        duration,
      });
    this.minute = limiter("verify-mail-minute", 1, 60);
    this.hour = limiter("verify-mail-hour", RESENDS_PER_HOUR, 3600);
  }
}

const waitText = (ms: number) => {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds <= 90) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
};

/** A refusal by a limiter as the answer's error, or null when the send is counted. */
async function countResend(limiter: RateLimiterPostgres, userId: string, tooMany: string): Promise<string | null> {
  try {
    await limiter.consume(userId);
    return null;
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    return `${tooMany} Try again in ${waitText(refusal.msBeforeNext)}.`;
  }
}

/** The signed-in user's new verification e-mail: refused when already verified, and past the resend limits. */
export async function resendVerificationEmail(
  db: Db,
  limiters: ResendLimits,
  mail: VerificationMail,
  principal: { accountId: string; userId: string },
) {
  const member = foundOr(await store.getMember(db, principal.accountId, principal.userId), "The user");
  if (member.user.isVerified) {
    return { success: false, message: null, error: "Your e-mail address is verified already." };
  }
  const refusal =
    (await countResend(limiters.minute, principal.userId, "A verification e-mail was sent less than a minute ago.")) ??
    (await countResend(
      limiters.hour,
      principal.userId,
      `Verification e-mails are limited to ${RESENDS_PER_HOUR} an hour.`,
    ));
  if (refusal) return { success: false, message: null, error: refusal };
  await sendVerificationEmail(db, mail, { ...principal, email: member.user.email });
  const message = mail.mailer.connected
    ? `We sent a new link to ${member.user.email}. Earlier links no longer work.`
    : `A new link to ${member.user.email} is in the outbox: e-mail is not connected on this service, so it was not sent.`;
  return { success: true, message, error: null };
}

/**
 * Verifies the e-mail address of the user a link was made for, whoever opens it; a link works once.
 * Failed checks are limited per client address (sign-in-guard.ts).
 */
export async function verifyEmail(
  db: Db,
  events: DomainEvents,
  guard: SignInGuard,
  token: string,
  clientAddress: string,
) {
  type Answer = { success: boolean; message: string | null; error: string | null };
  return guard.tokenCheck<Answer>(clientAddress, async () => {
    const link = token ? await store.takeEmailVerification(db, tokenHashOf(token)) : undefined;
    if (!link) {
      const error = `This link is not valid or was used already. ${NEW_LINK_ADVICE}`;
      return { valid: false, answer: { success: false, message: null, error } };
    }
    if (link.expiresAt.getTime() <= Date.now()) {
      return { valid: true, answer: { success: false, message: null, error: `This link expired. ${NEW_LINK_ADVICE}` } };
    }
    const user = foundOr(await store.markUserVerified(db, link.userId), "The user");
    await events.emitAndWait("viewer.changed", { accountId: null, userId: link.userId });
    return { valid: true, answer: { success: true, message: `${user.email} is verified.`, error: null } };
  });
}
