import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn } from "../../platform/db/columns.ts";

export const accounts = pgTable("accounts", {
  id: idColumn(),
  companyName: text("company_name"),
  isEnterprise: boolean("is_enterprise").notNull().default(false),
  billingVersion: integer("billing_version").notNull().default(6),
  stealthMode: boolean("stealth_mode").notNull().default(false),
  endpointDiscardingDisabled: boolean("endpoint_discarding_disabled").notNull().default(false),
  accountAIOptOut: boolean("account_ai_opt_out").notNull().default(false),
  /** Per-account overrides of the configured feature flag defaults, by flag name. */
  featureFlags: jsonb("feature_flags").$type<Record<string, boolean>>().notNull().default({}),
  freeTrialEndsAt: timestamp("free_trial_ends_at", { withTimezone: true }),
  createdAt: createdAtColumn(),
});

/** The column of every row an account owns: the account goes, its rows go. */
export const accountIdColumn = () =>
  uuid("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" });

export const users = pgTable(
  "users",
  {
    id: idColumn(),
    email: text("email").notNull(),
    passwordHash: text("password_hash"),
    fullName: text("full_name"),
    telegramUsername: text("telegram_username"),
    profileImage: text("profile_image"),
    isVerified: boolean("is_verified").notNull().default(false),
    onboardedAt: timestamp("onboarded_at", { withTimezone: true }),
    createdAt: createdAtColumn(),
  },
  (t) => [uniqueIndex("users_email_lower").on(sql`lower(${t.email})`)],
);

export const memberships = pgTable(
  "memberships",
  {
    accountId: accountIdColumn(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** OWNER, ADMIN or VIEWER; exactly one OWNER (the primary user) per account. */
    role: text("role").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] }), index("memberships_user").on(t.userId)],
);

export const sessions = pgTable(
  "sessions",
  {
    /** SHA-256 of the cookie value; the value itself is never stored. */
    tokenHash: text("token_hash").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    accountId: accountIdColumn(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [index("sessions_user").on(t.userId)],
);

/**
 * Sign-in attempts per email and per client address, counted by rate-limiter-flexible's PostgreSQL store:
 * its columns (key: the limiter's prefix and the counted key; expire: epoch ms), so every process shares them.
 */
export const signInLimits = pgTable("sign_in_limits", {
  key: varchar("key", { length: 255 }).primaryKey(),
  points: integer("points").notNull().default(0),
  expire: bigint("expire", { mode: "number" }),
});

export const plans = pgTable("plans", {
  id: text("id").primaryKey(),
  kind: text("kind").notNull(),
  name: text("name").notNull(),
  prettyName: text("pretty_name").notNull(),
  description: text("description"),
  priceCents: integer("price_cents").notNull(),
  defaultEndpointLimit: integer("default_endpoint_limit").notNull(),
  defaultResponsesPerMonth: bigint("default_responses_per_month", { mode: "number" }).notNull(),
  defaultRequestsPerSecond: integer("default_requests_per_second").notNull(),
  /** Days the delivery history of streams and webhooks is kept (pruned by the stream engine). */
  deliveryHistoryDays: integer("delivery_history_days").notNull().default(7),
  createdAt: createdAtColumn(),
});

export const subscriptions = pgTable("subscriptions", {
  id: idColumn(),
  accountId: uuid("account_id")
    .notNull()
    .unique()
    .references(() => accounts.id, { onDelete: "cascade" }),
  planId: text("plan_id")
    .notNull()
    .references(() => plans.id),
  status: text("status").notNull().default("active"),
  interval: text("interval").notNull().default("MONTHLY"),
  startDate: timestamp("start_date", { withTimezone: true }).notNull().defaultNow(),
  currentPeriodStart: timestamp("current_period_start", { withTimezone: true }).notNull(),
  currentPeriodEnd: timestamp("current_period_end", { withTimezone: true }).notNull(),
  endpointLimit: integer("endpoint_limit").notNull(),
  responsesPerMonth: bigint("responses_per_month", { mode: "number" }).notNull(),
  requestsPerSecond: integer("requests_per_second").notNull(),
});

/**
 * A user's e-mail verification link: only the SHA-256 of its token is kept, one per user (a new link
 * replaces the old), used once, until `expiresAt`.
 */
export const emailVerifications = pgTable("email_verifications", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  tokenHash: text("token_hash").notNull().unique(),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  createdAt: createdAtColumn(),
});
