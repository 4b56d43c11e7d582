/**
 * The limits on guessing: passwords at sign-in and when a password is changed, and tokens in links.
 * Counts live in PostgreSQL's sign_in_limits table (rate-limiter-flexible), so every process shares them;
 * only the pacing of one address's attempts is kept in the process (see AddressPacer).
 *
 * The rules (docs/decisions/0801-sign-in-limits.md):
 * - Per account (its email, from anywhere): past SLOW_AFTER failures each check waits longer; past
 *   LOCK_AFTER the email is refused for LOCK_MINUTES.
 * - Per account and address: LOCK_AFTER failures lock the pair. An address the account has signed in
 *   from before (a known address) is held by this pair limit alone, so an attacker elsewhere who locks
 *   the account does not lock its owner out of the office they sign in from.
 * - Per address (every email): failures are never refused, only paced. Past ADDRESS_PACE_AFTER failures
 *   in an hour the address gets one attempt per slot, slots growing from 1 s to 8 s apart; an attempt
 *   whose slot is more than MAX_SLOT_WAIT_MS away is refused with when to try again. One wrong password
 *   too many in an office slows the office's next sign-in by a slot; it never refuses it.
 */
import { createHash } from "node:crypto";
import { getTableName } from "drizzle-orm";
import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { clientAddressKey } from "../../platform/client-address.ts";
import type { Db } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import { signInLimits } from "./tables.ts";

/** Failures of one account (or one account from one address) before its answers slow down, and before it is refused. */
export const SLOW_AFTER = 3;
export const LOCK_AFTER = 8;
const LOCK_MINUTES = 15;
/** Failures older than this no longer count against an account. */
const FAILURE_WINDOW_MINUTES = 15;
/** Failures from one address in an hour, whatever the emails, before its attempts are paced. */
export const ADDRESS_PACE_AFTER = 30;
const ADDRESS_WINDOW_SECONDS = 3600;
/** The longest an attempt waits for its address's slot; past it the attempt is refused. */
export const MAX_SLOT_WAIT_MS = 10_000;
/** How long a successful sign-in makes its address a known one for the account. */
const KNOWN_ADDRESS_DAYS = 90;
/** Failed checks of tokens (links in mail) from one address in an hour before it is refused for the hour. */
export const TOKEN_CHECKS_PER_HOUR = 30;

/** How long a sign-in attempt waits before its check, after this many earlier failures for its account. */
export const signInBackoffMs = (earlierFailures: number) =>
  earlierFailures < SLOW_AFTER ? 0 : Math.min(250 * 2 ** (earlierFailures - SLOW_AFTER), 4000);

/**
 * How far apart an address's attempts are kept after this many failures from it in the hour: none up to
 * ADDRESS_PACE_AFTER, then 1 s, doubling every further ADDRESS_PACE_AFTER failures up to 8 s. From one
 * address that is at most about 540 attempts an hour (30 unpaced, 30 a second apart, 30 two apart, 30 four
 * apart, the rest of the hour eight apart) per API process: a list of 1,000 stolen passwords takes hours.
 */
export function addressSlotMs(failures: number): number {
  if (failures < ADDRESS_PACE_AFTER) return 0;
  const steps = Math.floor((failures - ADDRESS_PACE_AFTER) / ADDRESS_PACE_AFTER);
  return Math.min(1000 * 2 ** steps, 8000);
}

/**
 * One slot per interval for each address, in this process: a thousand parallel attempts from one address
 * each take the next slot, so the address's rate holds however many it sends at once.
 */
export class AddressPacer {
  private readonly nextSlotAt = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Takes the address's next slot and returns how long to wait for it, or, when that is past
   * MAX_SLOT_WAIT_MS, takes nothing and returns the refusal's wait as a negative number.
   */
  reserve(addressKey: string, intervalMs: number): number {
    const now = this.now();
    this.forgetPast(now);
    const slot = Math.max(now, this.nextSlotAt.get(addressKey) ?? 0);
    const wait = slot - now;
    if (wait > MAX_SLOT_WAIT_MS) return -wait;
    this.nextSlotAt.set(addressKey, slot + intervalMs);
    return wait;
  }

  /** Addresses whose slots have all passed hold nothing; forgotten when the map grows, so it stays small. */
  private forgetPast(now: number) {
    if (this.nextSlotAt.size < 10_000) return;
    for (const [key, at] of this.nextSlotAt) if (at <= now) this.nextSlotAt.delete(key);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const waitText = (ms: number) => {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds <= 90) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
};

const tooMany = (what: string, ms: number) => new AppError("RATE_LIMITED", `${what}. Try again in ${waitText(ms)}.`);

/**
 * Counts one attempt (one atomic statement, so parallel attempts each count), or refuses it while locked
 * with `what` and when to try again; `refused` runs first (to take a refused attempt's point back).
 */
export async function countAttempt(
  limiter: RateLimiterPostgres,
  key: string,
  what: string,
  refused?: () => Promise<unknown>,
): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(key);
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    await refused?.();
    throw tooMany(what, refusal.msBeforeNext);
  }
}

/** An email's key: hashed, so any length fits the key column and the table holds no email addresses. */
const emailKeyOf = (email: string) => createHash("sha256").update(email.toLowerCase()).digest("hex");

/**
 * The counters of one database and the pacing of its attempts; one per service (the account plugin makes
 * it), so the pacing and the locks held in memory are the service's own.
 */
export class SignInGuard {
  private readonly email: RateLimiterPostgres;
  private readonly pair: RateLimiterPostgres;
  private readonly address: RateLimiterPostgres;
  private readonly known: RateLimiterPostgres;
  private readonly tokenChecks: RateLimiterPostgres;
  readonly pacer: AddressPacer;

  constructor(db: Db, pacer = new AddressPacer()) {
    this.pacer = pacer;
    const table = { storeClient: db.$client, tableName: getTableName(signInLimits), tableCreated: true };
    const lock = { ...table, duration: FAILURE_WINDOW_MINUTES * 60, blockDuration: LOCK_MINUTES * 60 };
    // Once a key's lock is written to the table (at points + 1), later attempts in this process are refused
    // from memory until the lock ends, without a query.
    this.email = new RateLimiterPostgres({
      ...lock,
      keyPrefix: "email",
      points: LOCK_AFTER,
      inMemoryBlockOnConsumed: LOCK_AFTER + 2,
    });
    this.pair = new RateLimiterPostgres({
      ...lock,
      keyPrefix: "pair",
      points: LOCK_AFTER,
      inMemoryBlockOnConsumed: LOCK_AFTER + 2,
    });
    // Counts, never refuses: an address is paced, not locked.
    this.address = new RateLimiterPostgres({
      ...table,
      keyPrefix: "address-failures",
      points: Number.MAX_SAFE_INTEGER,
      duration: ADDRESS_WINDOW_SECONDS,
    });
    this.known = new RateLimiterPostgres({
      ...table,
      keyPrefix: "known-address",
      points: 1,
      duration: KNOWN_ADDRESS_DAYS * 86_400,
    });
    this.tokenChecks = new RateLimiterPostgres({
      ...table,
      keyPrefix: "token-checks",
      points: TOKEN_CHECKS_PER_HOUR,
      duration: 3600,
      blockDuration: 3600,
    });
  }

  /**
   * Runs `check` (the password's check, true when right) within the limits for `email` from
   * `clientAddress`: the attempt is counted before the check, so parallel attempts each count, and taken
   * back when it succeeds.
   */
  async signIn(email: string, clientAddress: string, check: () => Promise<boolean>): Promise<boolean> {
    const emailKey = emailKeyOf(email);
    const addressKey = clientAddressKey(clientAddress);
    const pairKey = `${emailKey}:${addressKey}`;
    const known = (await this.known.get(pairKey)) !== null;

    const addressCount = await this.address.consume(addressKey);
    if (!known) {
      const interval = addressSlotMs(addressCount.consumedPoints - 1);
      const wait = interval > 0 ? this.pacer.reserve(addressKey, interval) : 0;
      if (wait < 0) {
        await this.address.reward(addressKey);
        throw tooMany("Too many sign-ins from this address", -wait);
      }
      if (wait > 0) await sleep(wait);
    }

    const pairCount = await countAttempt(this.pair, pairKey, "Too many failed sign-ins for this email");
    let earlierFailures = pairCount.consumedPoints - 1;
    if (known) {
      // The account's count still grows (it locks other addresses), but does not lock a known one.
      await this.email.penalty(emailKey);
    } else {
      const accountCount = await countAttempt(this.email, emailKey, "Too many failed sign-ins for this email");
      earlierFailures = accountCount.consumedPoints - 1;
    }
    const backoff = signInBackoffMs(earlierFailures);
    if (backoff > 0) await sleep(backoff);

    if (!(await check())) return false;
    await Promise.all([
      this.email.delete(emailKey),
      this.pair.delete(pairKey),
      this.address.reward(addressKey),
      this.known.set(pairKey, 1, KNOWN_ADDRESS_DAYS * 86_400),
    ]);
    return true;
  }

  /**
   * Runs `check` (of a signed-in user's current password) within the account's limit: a session's holder
   * could otherwise guess the password without limit.
   */
  async passwordCheck(email: string, check: () => Promise<boolean>): Promise<boolean> {
    const emailKey = emailKeyOf(email);
    const counted = await countAttempt(this.email, emailKey, "Too many failed sign-ins for this email");
    const backoff = signInBackoffMs(counted.consumedPoints - 1);
    if (backoff > 0) await sleep(backoff);
    if (!(await check())) return false;
    await this.email.delete(emailKey);
    return true;
  }

  /**
   * Runs `check` of a token from a link (true when it was valid) within the address's failed token checks
   * per hour: tokens are long enough that guessing cannot work, and this keeps it so.
   */
  async tokenCheck<T>(clientAddress: string, check: () => Promise<{ valid: boolean; answer: T }>): Promise<T> {
    const addressKey = clientAddressKey(clientAddress);
    await countAttempt(this.tokenChecks, addressKey, "Too many links checked from this address");
    const { valid, answer } = await check();
    if (valid) await this.tokenChecks.reward(addressKey);
    return answer;
  }
}
