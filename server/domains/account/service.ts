import { hash, randomBytes } from "node:crypto";
import { getTableName } from "drizzle-orm";
import { RateLimiterPostgres } from "rate-limiter-flexible";
import { clientAddressKey } from "../../platform/client-address.ts";
import type { AppConfig } from "../../platform/config.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { AppError, badInput, conflict, forbidden, foundOr, notFound } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { isUuid } from "../../platform/ids.ts";
import { hashPassword, verifyPassword } from "../../platform/passwords.ts";
import type { Role } from "../../platform/roles.ts";
import { addMonths } from "./billing-period.ts";
import { cataloguePlan, cataloguePlans, planLimits } from "./plan-catalogue.ts";
import { countAttempt, type SignInGuard } from "./sign-in-guard.ts";
import * as store from "./store.ts";
import { signInLimits } from "./tables.ts";

export const FREE_PLAN_ID = "b6_free";
export const SESSION_COOKIE = "np_session";

/** Sign-ups from one client address are counted per hour, from the first in the hour. */
const SIGN_UP_WINDOW_SECONDS = 3600;
/** Sign-up attempts (failed or not) an address may make per account it may create (config.signUpsPerHour). */
export const SIGN_UP_ATTEMPTS_PER_ACCOUNT = 4;

/** The session in use and whose it is. */
interface SessionOwner {
  accountId: string;
  userId: string;
  sessionTokenHash: string;
}

/**
 * The caller's own session: what a user changes of themselves (password, profile, signing out) needs one.
 * An API key acts for its account, not as a person, so it is refused here.
 */
export function ownSession<P extends { accountId: string; userId: string; sessionTokenHash: string | null }>(
  principal: P,
): P & SessionOwner {
  const { sessionTokenHash } = principal;
  if (sessionTokenHash === null)
    throw new AppError("FORBIDDEN", "An API key cannot do this: sign in to change your own user.");
  return { ...principal, sessionTokenHash };
}

// The one-shot hash: a third of createHash's cost, on every signed-in request.
export const hashSessionToken = (token: string) => hash("sha256", token, "hex");

export async function seedPlans(db: Executor) {
  await store.upsertPlans(
    db,
    cataloguePlans().map((p) => ({
      id: p.id,
      kind: p.kind,
      name: p.name,
      prettyName: p.prettyName,
      description: p.description,
      priceCents: p.priceCents,
      defaultEndpointLimit: p.defaultEndpointLimit,
      defaultResponsesPerMonth: p.defaultResponsesPerMonth,
      defaultRequestsPerSecond: p.defaultRequestsPerSecond,
      deliveryHistoryDays: p.deliveryHistoryDays,
    })),
  );
}

/** A subscription row copying its plan's limits; billing manages it from here on. */
export async function startSubscription(db: Executor, accountId: string, planId: string, now = new Date()) {
  const plan = foundOr(cataloguePlan(planId), "The plan");
  await store.insertSubscription(db, {
    accountId,
    planId,
    status: "active",
    interval: "MONTHLY",
    startDate: now,
    currentPeriodStart: now,
    currentPeriodEnd: addMonths(now, 1),
    ...planLimits(plan),
  });
}

export interface SignUpInput {
  email: string;
  password: string;
  fullName?: string;
  companyName?: string;
}

export async function signUp(db: Db, input: SignUpInput, options: { verified?: boolean; planId?: string } = {}) {
  if (await store.findUserByEmail(db, input.email)) {
    throw badInput([{ pointer: "/email", message: "An account with this email exists already." }]);
  }
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const account = await store.insertAccount(tx, { companyName: input.companyName || null });
    const user = await store.insertUser(tx, {
      email: input.email.trim(),
      passwordHash,
      fullName: input.fullName || null,
      isVerified: options.verified ?? false,
    });
    await store.insertMembership(tx, account.id, user.id, "OWNER");
    await startSubscription(tx, account.id, options.planId ?? FREE_PLAN_ID);
    return { accountId: account.id, userId: user.id };
  });
}

/** Adds a user to an account with a role; used by seeding and by invitations later. */
export async function addMember(
  db: Db,
  accountId: string,
  input: { email: string; password: string; fullName?: string; role: Role },
) {
  if (input.role === "OWNER") throw badInput([{ pointer: "/role", message: "An account has one owner." }]);
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const user = await store.insertUser(tx, {
      email: input.email,
      passwordHash,
      fullName: input.fullName ?? null,
      isVerified: true,
    });
    await store.insertMembership(tx, accountId, user.id, input.role);
    return user.id;
  });
}

export async function createSession(db: Db, config: AppConfig, accountId: string, userId: string) {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + config.sessionDays * 86_400_000);
  await store.insertSession(db, { tokenHash: hashSessionToken(token), accountId, userId, expiresAt });
  return { token, expiresAt };
}

/** Ends a session; every process forgets it before this returns. */
export async function signOut(db: Db, events: DomainEvents, principal: SessionOwner) {
  await store.deleteSession(db, principal.sessionTokenHash);
  await events.emitAndWait("sessions.changed", { accountId: principal.accountId, userId: principal.userId });
}

/**
 * Checks an email and password within the sign-in limits (sign-in-guard.ts): per account, per account
 * and address, and the pacing of each address.
 */
export async function authenticate(db: Db, guard: SignInGuard, email: string, password: string, clientAddress: string) {
  let user: Awaited<ReturnType<typeof store.findUserByEmail>>;
  const valid = await guard.signIn(email, clientAddress, async () => {
    user = await store.findUserByEmail(db, email);
    return verifyPassword(user?.passwordHash ?? null, password);
  });
  if (!valid || !user) throw new AppError("UNAUTHENTICATED", "The email or password is not right.");
  const membership = await store.firstMembership(db, user.id);
  if (!membership) throw new AppError("FORBIDDEN", "This user belongs to no account.");
  return { userId: user.id, accountId: membership.accountId };
}

/**
 * The sign-up counters, beside the sign-in ones in sign_in_limits, for `accountsPerHour`
 * (config.signUpsPerHour); one pair per service (the account plugin makes it).
 */
export class SignUpLimits {
  /** Accounts made (and being made) per client address. */
  readonly accounts: RateLimiterPostgres;
  /** Sign-up attempts per client address, failed or not. */
  readonly attempts: RateLimiterPostgres;

  constructor(db: Db, accountsPerHour: number) {
    const shared = {
      storeClient: db.$client,
      tableName: getTableName(signInLimits),
      tableCreated: true,
      duration: SIGN_UP_WINDOW_SECONDS,
    };
    const attempts = accountsPerHour * SIGN_UP_ATTEMPTS_PER_ACCOUNT;
    this.accounts = new RateLimiterPostgres({ ...shared, keyPrefix: "signup-accounts", points: accountsPerHour });
    // Once an address is past its attempts, later ones in this process are refused from memory until its
    // hour ends, without a query.
    this.attempts = new RateLimiterPostgres({
      ...shared,
      keyPrefix: "signup-attempts",
      points: attempts,
      inMemoryBlockOnConsumed: attempts + 1,
    });
  }
}

/**
 * Signs up a new account for a client at `clientAddress`, within the address's new accounts per hour
 * (`limiters`, config.signUpsPerHour), counted in PostgreSQL so that every process shares the counts. An attempt
 * whose input is not valid never gets here and costs nothing. Every other attempt counts against
 * SIGN_UP_ATTEMPTS_PER_ACCOUNT times as many attempts, so a flood of failing ones (taken emails) is
 * bounded too. A slot is taken before the account is made, so parallel attempts cannot pass the limit
 * together, and given back when the attempt is refused or fails: only accounts made spend slots.
 */
export async function signUpFromAddress(db: Db, limiters: SignUpLimits, input: SignUpInput, clientAddress: string) {
  const addressKey = clientAddressKey(clientAddress);
  await countAttempt(limiters.attempts, addressKey, "Too many sign-up attempts from this address");
  const giveSlotBack = () => limiters.accounts.reward(addressKey);
  await countAttempt(limiters.accounts, addressKey, "Too many new accounts from this address", giveSlotBack);
  try {
    return await signUp(db, input);
  } catch (error) {
    await giveSlotBack();
    throw error;
  }
}

export async function setPassword(
  db: Db,
  events: DomainEvents,
  guard: SignInGuard,
  principal: SessionOwner,
  input: { currentPassword: string; password: string; passwordConfirmation: string },
) {
  if (input.password !== input.passwordConfirmation) {
    return { success: false, message: null, error: "The new password and its confirmation differ." };
  }
  const member = foundOr(await store.getMember(db, principal.accountId, principal.userId), "The user");
  const right = await guard.passwordCheck(member.user.email, () =>
    verifyPassword(member.user.passwordHash, input.currentPassword),
  );
  if (!right) return { success: false, message: null, error: "The current password is not right." };
  const passwordHash = await hashPassword(input.password);
  await db.transaction(async (tx) => {
    await store.updateUser(tx, principal.accountId, principal.userId, { passwordHash });
    await store.deleteOtherSessions(tx, principal.accountId, principal.userId, principal.sessionTokenHash);
  });
  await events.emitAndWait("sessions.changed", { accountId: principal.accountId, userId: principal.userId });
  return { success: true, message: "Your password was changed. Other sessions were signed out.", error: null };
}

export interface UpdateAccountInput {
  userFullName?: string;
  companyName?: string;
  telegramUsername?: string;
  accountAIOptOut?: boolean;
}

export async function updateAccount(
  db: Db,
  events: DomainEvents,
  principal: { accountId: string; userId: string; role: Role },
  input: UpdateAccountInput,
) {
  const accountChanges = input.companyName !== undefined || input.accountAIOptOut !== undefined;
  const userChanges = input.userFullName !== undefined || input.telegramUsername !== undefined;
  // Personal fields are anyone's own; account-wide fields need an admin.
  if (accountChanges && principal.role === "VIEWER")
    throw forbidden("Only an admin can change the account's settings.");
  await db.transaction(async (tx) => {
    if (userChanges) {
      await store.updateUser(tx, principal.accountId, principal.userId, {
        ...(input.userFullName !== undefined && { fullName: input.userFullName || null }),
        ...(input.telegramUsername !== undefined && {
          telegramUsername: input.telegramUsername.replace(/^@/, "") || null,
        }),
      });
    }
    if (accountChanges) {
      await store.updateAccountRow(tx, principal.accountId, {
        ...(input.companyName !== undefined && { companyName: input.companyName || null }),
        ...(input.accountAIOptOut !== undefined && { accountAIOptOut: input.accountAIOptOut }),
      });
    }
  });
  await events.emitAndWait("viewer.changed", {
    accountId: accountChanges ? principal.accountId : null,
    userId: userChanges ? principal.userId : null,
  });
}

/** The one rule for role changes: admins and the owner change roles; the owner stays owner. */
export async function updateUserRole(
  db: Db,
  events: DomainEvents,
  principal: { accountId: string; userId: string },
  userId: string,
  role: string,
) {
  if (role !== "ADMIN" && role !== "VIEWER") {
    throw badInput([{ pointer: "/role", message: "Choose one of: ADMIN, VIEWER." }]);
  }
  const member = foundOr(
    isUuid(userId) ? await store.getMember(db, principal.accountId, userId) : undefined,
    "The team member",
  );
  if (member.role === "OWNER") throw conflict("The account owner's role cannot be changed.");
  await store.updateMemberRole(db, principal.accountId, userId, role);
  await events.emitAndWait("sessions.changed", { accountId: principal.accountId, userId });
  const updated = foundOr(await store.getMember(db, principal.accountId, userId), "The team member");
  return updated;
}

export function featureFlags(config: AppConfig, account: store.AccountRow): Record<string, boolean> {
  return { ...config.featureFlags, ...account.featureFlags };
}

/** The price of the account's plan in cents (0 without a subscription): what plan-gated features compare. */
export async function planPriceCents(db: Executor, accountId: string): Promise<number> {
  return (await store.getSubscription(db, accountId))?.plan.priceCents ?? 0;
}

/** What the viewer is made of: the account, the caller's membership and the subscription with its plan. */
export async function viewerOf(db: Db, principal: { accountId: string; userId: string }) {
  const row = await store.getViewerRows(db, principal.accountId, principal.userId);
  if (!row) throw notFound("The account");
  const { account, user, role, joinedAt, subscription, plan } = row;
  return { account, member: { user, role, joinedAt }, subscription: { subscription, plan } };
}

export async function getAccountOrFail(db: Executor, accountId: string) {
  return foundOr(await store.getAccount(db, accountId), "The account");
}

export const listMembers = (db: Db, accountId: string) => store.listMembers(db, accountId);

export const listPlans = (db: Db) => store.listPlans(db);

export const endSession = (db: Db, sessionTokenHash: string) => store.deleteSession(db, sessionTokenHash);

/**
 * Billing's changes to the subscription row (plan, limits, period, status), in the caller's transaction,
 * and to the account's billing fields; the caller emits viewer.changed once it commits.
 */
export const changeSubscription = store.updateSubscriptionRow;
export const changeAccountBilling = (
  tx: Executor,
  accountId: string,
  set: { billingVersion?: number; freeTrialEndsAt?: Date | null },
) => store.updateAccountRow(tx, accountId, set);

/** The account's subscription and its plan's row. */
export const subscriptionOf = (db: Executor, accountId: string) => store.getSubscription(db, accountId);

/** The account's subscription and plan, locked until the transaction ends (limits checked against it hold). */
/** Subscriptions due to close, locked (those another process holds skipped): the billing clock's batch. */
export const lockDueSubscriptions = store.lockDueSubscriptions;
export const moveSubscriptionPeriods = store.movePeriods;
export const trialEndsOf = store.trialEndsOf;
export const lockedSubscription = (tx: Executor, accountId: string) => store.getSubscription(tx, accountId, true);
