import type { FastifyReply, FastifyRequest } from "fastify";
import { type Context, type Principal, requirePrincipal, requireRole } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { notFound } from "../../platform/errors.ts";
import { validateInput } from "../../platform/validation.ts";
import * as service from "./service.ts";
import * as store from "./store.ts";

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

function planView(plan: store.PlanRow) {
  return {
    id: plan.id,
    kind: plan.kind,
    name: plan.name,
    prettyName: plan.prettyName,
    price: plan.priceCents,
    createdAt: plan.createdAt,
    description: plan.description,
    defaultEndpointLimit: plan.defaultEndpointLimit,
    defaultResponsesPerMonth: plan.defaultResponsesPerMonth,
    defaultRequestsPerSecond: plan.defaultRequestsPerSecond,
  };
}

export async function loadViewer(ctx: Context, principal: Principal) {
  const [account, member, subscription] = await Promise.all([
    store.getAccount(ctx.db, principal.accountId),
    store.getMember(ctx.db, principal.accountId, principal.userId),
    store.getSubscription(ctx.db, principal.accountId),
  ]);
  if (!account || !member || !subscription) throw notFound("The account");
  const flags = service.featureFlags(ctx.config, account);
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
    configuration: {
      ...Object.fromEntries(flagNames.map((name) => [name, { isEnabled: flags[name] === true }])),
      newDashboard: flags.newDashboard === true,
      billing4: flags.billing4 === true,
    },
    accountConfiguration: { accountRps: { isEnabled: flags.accountRps === true } },
    subscription: {
      id: sub.id,
      isActive: sub.status === "active",
      status: sub.status,
      plan: planView(plan),
      interval: sub.interval,
      startDate: sub.startDate,
      currentPeriodStartDate: sub.currentPeriodStart,
      currentPeriodEndDate: sub.currentPeriodEnd,
      endpointLimit: sub.endpointLimit,
      responsesPerMonth: sub.responsesPerMonth,
      requestsPerSecond: sub.requestsPerSecond,
    },
    flags,
  };
}

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

function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, expires: Date) {
  reply.setCookie(service.SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "lax",
    secure: request.protocol === "https",
    path: "/",
    expires,
  });
}

async function startSession(ctx: Context, accountId: string, userId: string) {
  const session = await service.createSession(ctx.db, ctx.config, accountId, userId);
  setSessionCookie(ctx.request, ctx.reply, session.token, session.expiresAt);
  const resolved = await ctx.services.sessions.resolve(session.token);
  if (!resolved) throw new Error("A new session could not be read back");
  ctx.principal = resolved;
  return loadViewer(ctx, resolved);
}

export const accountResolvers: Resolvers = {
  Query: {
    viewer: (_: unknown, __: unknown, ctx: Context) => (ctx.principal ? loadViewer(ctx, ctx.principal) : null),
    team: async (_: unknown, __: unknown, ctx: Context) => {
      const principal = requirePrincipal(ctx);
      return (await store.listMembers(ctx.db, principal.accountId)).map(memberView);
    },
    plans: async (_: unknown, __: unknown, ctx: Context) => {
      requirePrincipal(ctx);
      return (await store.listPlans(ctx.db)).map(planView);
    },
  },
  Mutation: {
    signUp: async (_: unknown, args: { input: unknown }, ctx: Context) => {
      const input = validateInput<service.SignUpInput>("account#/$defs/signUpInput", args.input);
      const { accountId, userId } = await service.signUp(ctx.db, input);
      return startSession(ctx, accountId, userId);
    },
    signIn: async (_: unknown, args: { email: string; password: string }, ctx: Context) => {
      validateInput("account#/$defs/signInInput", args);
      const { accountId, userId } = await service.authenticate(ctx.db, args.email, args.password, ctx.request.ip);
      return startSession(ctx, accountId, userId);
    },
    signOut: async (_: unknown, __: unknown, ctx: Context) => {
      if (ctx.principal) await service.signOut(ctx.db, ctx.services.events, ctx.principal);
      ctx.reply.clearCookie(service.SESSION_COOKIE, { path: "/" });
      ctx.principal = null;
      return true;
    },
    setPassword: async (
      _: unknown,
      args: { currentPassword: string; password: string; passwordConfirmation: string },
      ctx: Context,
    ) => {
      const principal = requirePrincipal(ctx);
      validateInput("account#/$defs/setPasswordInput", args);
      return service.setPassword(ctx.db, ctx.services.events, principal, args);
    },
    updateAccount: async (_: unknown, args: { input: unknown }, ctx: Context) => {
      const principal = requirePrincipal(ctx);
      const input = validateInput<service.UpdateAccountInput>("account#/$defs/updateAccountInput", args.input);
      await service.updateAccount(ctx.db, principal, input);
      return loadViewer(ctx, principal);
    },
    updateUserRole: async (_: unknown, args: { userId: string; role: string }, ctx: Context) => {
      const principal = requireRole(ctx, "ADMIN");
      validateInput("team-member#/$defs/roleInput", { role: args.role });
      return memberView(await service.updateUserRole(ctx.db, ctx.services.events, principal, args.userId, args.role));
    },
  },
};
