import DataLoader from "dataloader";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type Context, loaderOf, type Principal } from "../../graphql/context.ts";
import { field, fieldWithInput, publicField, publicFieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import type { AppConfig } from "../../platform/config.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { publicBaseUrl, servedOverHttps } from "../../platform/http-headers.ts";
import type { Mailer } from "../../platform/mail.ts";
import * as service from "./service.ts";
import type { SessionCache } from "./sessions.ts";
import type { SignInGuard } from "./sign-in-guard.ts";
import type * as store from "./store.ts";
import { planView, subscriptionView } from "./subscription-view.ts";
import * as verification from "./verification.ts";
import type { ViewerModel } from "./viewer-model.ts";

const flagNames = [
  "smartContracts",
  "ipfsUploadFolders",
  "billing4MigrationPrompt",
  "consoleApi",
  "streamsTraceDatasets",
  "rollups",
  "rollupCreation",
  "rollupCreationVisible",
  "accountRps",
  "streamsSolana",
  "rbac",
  "errorLogs",
  "endpointChatbot",
  "multiChain",
  "endpointTags",
  "yearlyBilling",
  "yearlyBillingUpgrades",
  "holisticMetrics",
  "addonMetrics",
  "freeTrialsActive",
  "newOnboarding",
  "solanaMetrics",
  "mevRecovery",
  "quickfunctions",
  "rewards",
  "requireCancelReason",
] as const;

export async function loadViewer(ctx: Context, viewers: ViewerModel, principal: Principal) {
  const { account, member, subscription } = await viewers.rows(ctx.db, principal);
  const trialMs = account.freeTrialEndsAt ? account.freeTrialEndsAt.getTime() - Date.now() : null;
  const { subscription: sub, plan } = subscription;
  return {
    id: account.id,
    userId: member.user.id,
    uuid: member.user.id,
    email: member.user.email,
    userFullName: member.user.fullName,
    userRole: member.role,
    isEnterprise: account.isEnterprise,
    isPrimaryUser: member.role === "OWNER",
    createdAt: member.user.createdAt,
    isSso: false,
    isVerified: member.user.isVerified,
    isOnboarded: member.user.onboardedAt !== null,
    onboardingVersion: member.user.onboardedAt ? 1 : null,
    companyName: account.companyName,
    companyId: account.id,
    profileImage: member.user.profileImage,
    endpointDiscardingDisabled: account.endpointDiscardingDisabled,
    stripeCustomerId: null,
    signInMethods: member.user.passwordHash ? ["password"] : [],
    billingVersion: account.billingVersion,
    hasRollup: false,
    stealthMode: account.stealthMode,
    rewardfulAffiliateId: null,
    accountAIOptOut: account.accountAIOptOut,
    isFreeTrial: trialMs !== null,
    isFreeTrialExpired: trialMs !== null && trialMs <= 0,
    freeTrialDaysRemaining: trialMs === null ? null : Math.max(0, Math.ceil(trialMs / 86_400_000)),
    telegramUsername: member.user.telegramUsername,
    subscription: subscriptionView(sub, plan),
  };
}

/**
 * The account's feature flags, read fresh once per request: operators set them in the database, where no
 * event tells the viewer model of it, and they decide what the console offers.
 */
const flagsLoader = (ctx: Context) =>
  new DataLoader<string, Record<string, boolean>>(async (accountIds) =>
    Promise.all(
      accountIds.map(async (accountId) =>
        service.featureFlags(ctx.config, await service.getAccountOrFail(ctx.db, accountId)),
      ),
    ),
  );

const flagsOf = (ctx: Context, accountId: string) => loaderOf(ctx, flagsLoader).load(accountId);

function memberView(member: NonNullable<Awaited<ReturnType<typeof store.getMember>>>) {
  return {
    userId: member.user.id,
    email: member.user.email,
    fullName: member.user.fullName,
    role: member.role,
    isPrimaryUser: member.role === "OWNER",
    createdAt: member.joinedAt,
  };
}

function setSessionCookie(
  config: AppConfig,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  expires: Date,
) {
  reply.setCookie(service.SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "lax",
    // Secure whenever users reach the service over HTTPS, also behind a proxy that talks plain HTTP to it.
    secure: servedOverHttps(config) || request.protocol === "https",
    path: "/",
    expires,
  });
}

/** What the account API needs of the running service. */
export interface AccountApiDeps {
  sessions: SessionCache;
  /** The viewer query's rows, kept in the process. */
  viewers: ViewerModel;
  mailer: Mailer;
  events: DomainEvents;
  /** The service's limits on guessing passwords and tokens, and on sign-ups and resent mail. */
  signInGuard: SignInGuard;
  signUpLimits: service.SignUpLimits;
  resendLimits: verification.ResendLimits;
}

async function startSession(deps: AccountApiDeps, ctx: Context, accountId: string, userId: string) {
  const session = await service.createSession(ctx.db, ctx.config, accountId, userId);
  setSessionCookie(ctx.config, ctx.request, ctx.reply, session.token, session.expiresAt);
  const resolved = await deps.sessions.resolve(session.token);
  if (!resolved) throw new Error("A new session could not be read back");
  ctx.principal = resolved;
  return loadViewer(ctx, deps.viewers, resolved);
}

/** The mailer, and the console's address the links in its mail open. */
const verificationMail = (deps: AccountApiDeps, ctx: Context): verification.VerificationMail => ({
  mailer: deps.mailer,
  consoleUrl: publicBaseUrl(ctx.config, ctx.request),
});

/** What the Viewer, TeamMember and Plan types resolve from (the generated types' mappers). */
export type ViewerView = Awaited<ReturnType<typeof loadViewer>>;
export type TeamMemberView = ReturnType<typeof memberView>;
export type PlanView = ReturnType<typeof planView>;

export const accountResolvers = (deps: AccountApiDeps): Resolvers => ({
  Viewer: {
    configuration: async (viewer, _args, ctx) => {
      const flags = await flagsOf(ctx, viewer.id);
      return {
        ...Object.fromEntries(flagNames.map((name) => [name, { isEnabled: flags[name] === true }])),
        newDashboard: flags.newDashboard === true,
        billing4: flags.billing4 === true,
      };
    },
    accountConfiguration: async (viewer, _args, ctx) => {
      const flags = await flagsOf(ctx, viewer.id);
      return { accountRps: { isEnabled: flags.accountRps === true } };
    },
  },
  Query: {
    viewer: publicField(({ ctx, principal }) => (principal ? loadViewer(ctx, deps.viewers, principal) : null)),
    team: field("VIEWER", async ({ ctx, accountId }) => (await service.listMembers(ctx.db, accountId)).map(memberView)),
    plans: field("VIEWER", async ({ ctx }) => (await service.listPlans(ctx.db)).map(planView)),
  },
  Mutation: {
    signUp: publicFieldWithInput({ schema: "account#/$defs/signUpInput" }, async ({ ctx, input }) => {
      const { accountId, userId } = await service.signUpFromAddress(ctx.db, deps.signUpLimits, input, ctx.request.ip);
      const viewer = await startSession(deps, ctx, accountId, userId);
      if (!viewer.isVerified)
        await verification.sendVerificationEmail(ctx.db, verificationMail(deps, ctx), {
          accountId,
          userId,
          email: viewer.email,
        });
      return viewer;
    }),
    signIn: publicFieldWithInput(
      { schema: "account#/$defs/signInInput", of: (args) => args },
      async ({ ctx, input }) => {
        const { accountId, userId } = await service.authenticate(
          ctx.db,
          deps.signInGuard,
          input.email,
          input.password,
          ctx.request.ip,
        );
        return startSession(deps, ctx, accountId, userId);
      },
    ),
    signOut: publicField(async ({ ctx, principal }) => {
      if (principal) await service.signOut(ctx.db, deps.events, service.ownSession(principal));
      ctx.reply.clearCookie(service.SESSION_COOKIE, { path: "/" });
      ctx.principal = null;
      return true;
    }),
    setPassword: fieldWithInput(
      "VIEWER",
      { schema: "account#/$defs/setPasswordInput", of: (args) => args },
      ({ ctx, principal, input }) =>
        service.setPassword(ctx.db, deps.events, deps.signInGuard, service.ownSession(principal), input),
    ),
    resendVerificationEmail: field("VIEWER", ({ ctx, principal }) =>
      verification.resendVerificationEmail(
        ctx.db,
        deps.resendLimits,
        verificationMail(deps, ctx),
        service.ownSession(principal),
      ),
    ),
    verifyEmail: publicField(({ ctx, args }) =>
      verification.verifyEmail(ctx.db, deps.events, deps.signInGuard, args.token, ctx.request.ip),
    ),
    updateAccount: fieldWithInput(
      "VIEWER",
      { schema: "account#/$defs/updateAccountInput" },
      async ({ ctx, principal, input }) => {
        await service.updateAccount(ctx.db, deps.events, service.ownSession(principal), input);
        return loadViewer(ctx, deps.viewers, principal);
      },
    ),
    updateUserRole: fieldWithInput(
      "ADMIN",
      { schema: "team-member#/$defs/roleInput", of: (args) => ({ role: args.role }) },
      async ({ ctx, principal, args, input }) =>
        memberView(await service.updateUserRole(ctx.db, deps.events, principal, args.userId, input.role)),
    ),
  },
});
