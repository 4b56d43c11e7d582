/**
 * The API's operations as the SDL declares them (graphql-js on schemas/api.graphql), with argument values
 * built from their types, so the proofs cover a new operation without anyone writing a test for it.
 * Only what a type cannot say is declared here: which operations are self-service, which kind of thing
 * an id argument names, and a few valid sample values the schemas check (a key, a URL, code).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  buildSchema,
  type GraphQLField,
  type GraphQLInputType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
} from "graphql";
import { inputRuleOf } from "../../../server/graphql/field.ts";
import type { Resolvers } from "../../../server/graphql/resolvers.ts";

export const api = buildSchema(readFileSync(path.resolve(import.meta.dirname, "../../../schemas/api.graphql"), "utf8"));

export interface Operation {
  type: "query" | "mutation";
  name: string;
  field: GraphQLField<unknown, unknown>;
}

export function operations(): Operation[] {
  const of = (type: Operation["type"], fields: Record<string, GraphQLField<unknown, unknown>>) =>
    Object.values(fields).map((field) => ({ type, name: field.name, field }));
  return [
    ...of("query", api.getQueryType()?.getFields() ?? {}),
    ...of("mutation", api.getMutationType()?.getFields() ?? {}),
  ];
}

/** The document calling `op` with the arguments given, each as a variable of its SDL type. */
export function documentFor(op: Operation, args: Record<string, unknown>): string {
  const used = op.field.args.filter((a) => args[a.name] !== undefined);
  const declared = used.map((a) => `$${a.name}: ${a.type.toString()}`).join(", ");
  const call = used.map((a) => `${a.name}: $${a.name}`).join(", ");
  const selection = isLeafType(getNamedType(op.field.type)) ? "" : " { __typename }";
  return `${op.type} Proof${declared ? `(${declared})` : ""} { ${op.name}${call ? `(${call})` : ""}${selection} }`;
}

// ---------------------------------------------------------------- roles

/** Mutations a VIEWER may call, and why: they act on the caller's own session or user, never the account's things. */
export const SELF_SERVICE: Record<string, string> = {
  signUp: "creates a new account of one's own; open to anyone",
  signIn: "starts one's own session; open to anyone",
  signOut: "ends one's own session",
  setPassword: "changes one's own password (the current one is required)",
  updateAccount: "changes one's own name and preferences",
  resendVerificationEmail: "mails one's own verification link to one's own address",
  verifyEmail: "verifies the address a link was mailed to; open to anyone holding the link",
};

// ---------------------------------------------------------------- ids

/** The kinds of thing an account owns that an operation may name by id; the tenancy proof seeds one of each. */
export type Kind =
  | "endpoint"
  | "endpointExId"
  | "tag"
  | "token"
  | "jwt"
  | "referrer"
  | "ip"
  | "domainMask"
  | "requestFilter"
  | "rateLimiter"
  | "rateLimiterRate"
  | "limitOverride"
  | "keyOverride"
  | "stream"
  | "webhook"
  | "function"
  | "functionActivation"
  | "kvUpload"
  | "inspectionUrl"
  | "accessToken"
  | "addonInstall"
  | "invoice"
  | "paymentIntent"
  | "paymentCharge"
  | "taxId"
  | "user";

/**
 * What each id argument names, by `operation.argument` (`operation.argument.field` inside an input).
 * An id argument the SDL gains without an entry here fails the coverage proof.
 */
export const ID_ARGS: Record<string, Kind> = {
  "endpoint.id": "endpoint",
  "rateLimiters.endpointId": "endpoint",
  "rateLimits.endpointId": "endpoint",
  "errorLogs.endpointExId": "endpointExId",
  "errorLogDetails.endpointExId": "endpointExId",
  "endpointMetrics.endpointId": "endpoint",
  "usage.endpointId": "endpoint",
  "stream.id": "stream",
  "streamMetrics.id": "stream",
  "streamLogs.id": "stream",
  "streamDeliveries.id": "stream",
  "webhook.id": "webhook",
  "webhookMetrics.id": "webhook",
  "webhookLogs.id": "webhook",
  "webhookDeliveries.id": "webhook",
  "security.id": "endpoint",
  "endpointRpcMethods.endpointId": "endpoint",
  "function.id": "function",
  "functionHistory.id": "function",
  "functionSettings.id": "function",
  "functionVersions.id": "function",
  "functionLogs.id": "function",
  "functionMetrics.id": "function",
  "functionActivation.id": "functionActivation",
  "functionActivationResult.id": "functionActivation",
  "kvUploadPartUrl.input.uploadId": "kvUpload",
  "completeKvUpload.uploadId": "kvUpload",
  "abortKvUpload.uploadId": "kvUpload",
  "updateUserRole.userId": "user",
  "updateEndpointLabel.id": "endpoint",
  "toggleEndpointPaused.id": "endpoint",
  "archiveEndpoint.id": "endpoint",
  "addEndpointTag.endpointId": "endpoint",
  "removeEndpointTag.endpointId": "endpoint",
  "removeEndpointTag.tagId": "tag",
  "deleteTag.tagId": "tag",
  "createRateLimiter.endpointId": "endpoint",
  "updateRateLimiter.endpointId": "endpoint",
  "updateRateLimiter.rateLimiterId": "rateLimiter",
  "updateRateLimiterRate.endpointId": "endpoint",
  "updateRateLimiterRate.rateLimiterRateId": "rateLimiterRate",
  "deleteRateLimiter.endpointId": "endpoint",
  "deleteRateLimiter.rateLimiterId": "rateLimiter",
  "createRateLimitOverride.endpointId": "endpoint",
  "deleteRateLimitOverride.endpointId": "endpoint",
  "deleteRateLimitOverride.overrideId": "limitOverride",
  "createRateLimitKeyOverride.endpointId": "endpoint",
  "deleteRateLimitKeyOverride.endpointId": "endpoint",
  "deleteRateLimitKeyOverride.overrideId": "keyOverride",
  "updateStream.input.id": "stream",
  "activateStream.id": "stream",
  "pauseStream.id": "stream",
  "migrateStream.id": "stream",
  "deleteStream.id": "stream",
  "updateWebhook.input.id": "webhook",
  "activateWebhook.id": "webhook",
  "pauseWebhook.id": "webhook",
  "deleteWebhook.id": "webhook",
  "sendWebhookPayload.input.id": "webhook",
  "updateOption.id": "endpoint",
  "updateIpCustomHeader.id": "endpoint",
  "createAuthToken.id": "endpoint",
  "deleteAuthToken.id": "endpoint",
  "deleteAuthToken.tokenId": "token",
  "createJwt.id": "endpoint",
  "deleteJwt.id": "endpoint",
  "deleteJwt.jwtId": "jwt",
  "createReferrer.endpointId": "endpoint",
  "deleteReferrer.id": "referrer",
  "createIp.endpointId": "endpoint",
  "deleteIp.id": "ip",
  "createDomainMask.endpointId": "endpoint",
  "deleteDomainMask.id": "domainMask",
  "createRequestFilter.endpointId": "endpoint",
  "deleteRequestFilter.id": "requestFilter",
  "toggleRpcMethod.endpointId": "endpoint",
  "updateFunction.input.id": "function",
  "deleteFunction.id": "function",
  "callFunction.input.id": "function",
  "inspectionUrl.id": "inspectionUrl",
  "inspectedRequests.id": "inspectionUrl",
  "inspectedRequest.id": "inspectionUrl",
  "deleteInspectionUrl.id": "inspectionUrl",
  "clearInspectedRequests.id": "inspectionUrl",
  "revokeAccessToken.id": "accessToken",
  "updateAccessTokenIpRateLimit.id": "accessToken",
  "installedAddons.endpointId": "endpoint",
  "installAddon.input.endpointId": "endpoint",
  "installBundle.input.endpointId": "endpoint",
  "sendEvent.endpointId": "endpoint",
  "sendEvent.installId": "addonInstall",
  "changeAddonPlan.input.addonId": "addonInstall",
  "deleteAddon.addonId": "addonInstall",
  "deactivateAddOnImmediately.accountAddOnId": "addonInstall",
  "cancelDeactivation.addonId": "addonInstall",
  "invoice.id": "invoice",
  "downgradeSubscription.endpointIds": "endpoint",
  "createCoinbaseCharge.input.invoiceId": "invoice",
  "createStripeCryptoCharge.input.invoiceId": "invoice",
  "stripePaymentIntentStatus.paymentIntentId": "paymentIntent",
  "retryPayment.invoiceId": "invoice",
  "confirmPayment.chargeId": "paymentCharge",
  "paymentCharge.id": "paymentCharge",
  "changeAddonPlan.input.endpointId": "endpoint",
  "deleteAddon.endpointId": "endpoint",
  "updateTaxId.id": "taxId",
  "deleteTaxId.id": "taxId",
};

/** Id-like arguments that name no thing of an account, and why they are not a tenancy case. */
export const NOT_OWNED_IDS: Record<string, string> = {
  "endpoints.tagIds": "a filter: it narrows the caller's own endpoints and finds nothing of another account",
  "errorLogDetails.requestId": "looked up within the endpoint named by endpointExId, which is the tenancy case",
  "inspectedRequest.requestId": "looked up within the inspection URL named by id, which is the tenancy case",
  "toggleRpcMethod.methodId": "a JSON-RPC method name from the catalogue, the same for every account",
  "createQuickFunction.input.templateId": "a template from the catalogue, the same for every account",
  "addonPrice.planId": "an add-on plan from the catalogue, the same for every account",
  "installAddon.input.planId": "an add-on plan from the catalogue, the same for every account",
  "installAccountAddon.input.planId": "an add-on plan from the catalogue, the same for every account",
  "changeAddonPlan.input.currentPlanId":
    "an add-on plan from the catalogue, checked against the install named by addonId",
  "changeAddonPlan.input.newPlanId": "an add-on plan from the catalogue, the same for every account",
  "checkCouponCode.planId": "an add-on plan from the catalogue, the same for every account",
  "installBundle.input.bundleId": "a bundle from the catalogue, the same for every account",
  "trackBundle.bundleId": "a bundle from the catalogue, the same for every account",
  "installAddon.input.stripeSourceId":
    "the payment provider's reference kept with the install; nothing is looked up by it",
  "installAccountAddon.input.stripeSourceId":
    "the payment provider's reference kept with the install; nothing is looked up by it",
  "changeAddonPlan.input.stripeSourceId":
    "the payment provider's reference kept with the install; nothing is looked up by it",
  "installBundle.input.stripeSourceId":
    "the payment provider's reference kept with the install; nothing is looked up by it",
  "createSubscription.input.plan": "a plan from the catalogue, the same for every account",
  "upgradeSubscription.input.plan": "a plan from the catalogue, the same for every account",
  "downgradeSubscription.plan": "a plan from the catalogue, the same for every account",
  "scheduleBillingMigration.plan": "a plan from the catalogue, the same for every account",
  "migrateBillingVersion.plan": "a plan from the catalogue, the same for every account",
  "updatePaymentMethod.paymentProviderId": "the payment provider (builtin or stripe), the same for every account",
};

/** Every id-like argument of an operation (ID-typed, or a String named …Id), as `argument` or `argument.field`. */
export function idArguments(op: Operation): string[] {
  const found: string[] = [];
  const visit = (name: string, prefix: string, type: GraphQLInputType) => {
    const named = getNamedType(type);
    if (isInputObjectType(named)) {
      for (const f of Object.values(named.getFields())) visit(f.name, `${prefix}${name}.`, f.type);
      return;
    }
    if (named.name === "ID" || (named.name === "String" && /Id$/.test(name))) found.push(`${prefix}${name}`);
  };
  for (const a of op.field.args) visit(a.name, "", a.type);
  return found;
}

// ---------------------------------------------------------------- sample values

export interface Samples {
  ids: Partial<Record<Kind, string>>;
  network: string;
  /** A URL the egress policy allows (a local receiver). */
  url: string;
  /** A PEM public key createJwt accepts. */
  publicKey: string;
}

const isoHoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();

/** A valid value for a leaf by its name, when its type alone does not make one. */
function namedSample(name: string, samples: Samples): unknown {
  const byName: Record<string, unknown> = {
    network: samples.network,
    chain: "ethereum",
    email: "proof@example.com",
    notificationEmail: "proof@example.com",
    url: samples.url,
    password: "proof-password-1",
    currentPassword: "proof-password-1",
    passwordConfirmation: "proof-password-1",
    filterFunction: "function main(stream) { return stream.data; }",
    code: "function main(params) { return params.data; }",
    referrer: "app.example.com",
    ip: "10.0.0.1",
    host: "proof.example.com",
    method: "eth_call",
    methods: ["eth_call"],
    methodId: "eth_call",
    header: "X-Proof",
    publicKey: samples.publicKey,
    kid: "proof-kid",
    role: "VIEWER",
    requestId: "proof-request",
    securityToken: "proof-security-token",
    blockNumber: 1,
    startRange: 1,
    batchSize: 1,
    datasetBatchSize: 1,
    limit: 10,
    first: 10,
    rate: 10,
    rateLimit: 100,
    timeoutSec: 5,
    memoryMb: 128,
    startDate: isoHoursAgo(1),
    from: isoHoursAgo(1),
    destinationAttributes: { url: samples.url, maxRetry: 1, retryIntervalSec: 0 },
    params: { data: 1 },
    plan: "b6_free",
    couponCode: "TENOFF",
    reasons: ["OTHER"],
  };
  return byName[name];
}

const enumSamples: Record<string, string> = {
  StreamDestination: "WEBHOOK",
  StreamDataset: "BLOCK",
  StreamStatus: "PAUSED",
};

/** The JSON inputs of the test…Destination mutations: the attributes of their destination type. */
const JSON_INPUTS: Record<string, (s: Samples) => unknown> = {
  testWebhookDestination: (s) => ({ url: s.url }),
  testFunctionDestination: (s) => ({ functionID: s.ids.function ?? "00000000-0000-0000-0000-000000000000" }),
  testPostgresDestination: () => ({
    host: "127.0.0.1",
    port: 1,
    database: "proof",
    username: "proof",
    password: "proof",
    tableName: "proof",
    sslmode: "disable",
  }),
  testS3Destination: () => ({
    endpoint: "http://127.0.0.1:1",
    bucket: "proof",
    accessKey: "proof",
    secretKey: "proof",
  }),
  testAzureDestination: () => ({ storageAccount: "proof", container: "proof", sasToken: "sv=proof" }),
  testSnowflakeDestination: () => ({
    account: "proof",
    username: "proof",
    password: "proof",
    database: "proof",
    schema: "proof",
    warehouse: "proof",
    tableName: "proof",
  }),
};

/** Samples for one operation's argument where the name means something else than elsewhere. */
const OP_SAMPLES: Record<string, unknown> = {
  "createStreamWithFunction.input.destinationAttributes": { maxRetry: 1, retryIntervalSec: 0 },
  // params and paramsJson are one or the other: the samples send the JSON text.
  "callFunction.input.params": undefined,
  "testFunction.input.params": undefined,
  "callFunction.input.paramsJson": '{"data": 1}',
  "testFunction.input.paramsJson": '{"data": 1}',
  // The same for userData and userDataJson; a call's block (network, dataset, blockNumber) replaces params.
  "callFunction.input.userData": undefined,
  "testFunction.input.userData": undefined,
  "callFunction.input.userDataJson": '{"name": "proof"}',
  "testFunction.input.userDataJson": '{"name": "proof"}',
  "createQuickFunction.input.templateId": "hello-user-data",
  "callFunction.input.network": undefined,
  "callFunction.input.dataset": undefined,
  "callFunction.input.blockNumber": undefined,
  "addonPrice.planId": "trace-debug-pro",
  "installAddon.input.planId": "trace-debug-pro",
  "installAccountAddon.input.planId": "tx-guard-team",
  "changeAddonPlan.input.currentPlanId": "trace-debug-starter",
  "changeAddonPlan.input.newPlanId": "trace-debug-pro",
  "checkCouponCode.couponCode": "BUILDERS20",
  "installBundle.input.bundleId": "debug-kit",
  "trackBundle.bundleId": "debug-kit",
  "trackBundle.event": "VIEWED",
  "createTaxId.input.type": "gb_vat",
  "createTaxId.input.value": "GB123456789",
};

/**
 * Valid arguments for an operation: ids of the kinds `ID_ARGS` names, values by name where a type says
 * too little, otherwise the first enum value, `1`, `false` or a short text. Optional arguments other than
 * ids are left out unless `withOptional`.
 */
export function sampleArgs(op: Operation, samples: Samples, withOptional = false): Record<string, unknown> {
  const value = (key: string, name: string, type: GraphQLInputType, required: boolean): unknown => {
    // An optional id (usage's endpointId) names a thing as a required one does: it is always sent.
    const kind = ID_ARGS[`${op.name}.${key}`];
    if (kind) return samples.ids[kind] ?? `not-seeded-${kind}`;
    if (!required && !withOptional) return undefined;
    const inner = isNonNullType(type) ? type.ofType : type;
    if (key === "input" && JSON_INPUTS[op.name]) return JSON_INPUTS[op.name](samples);
    if (`${op.name}.${key}` in OP_SAMPLES) return OP_SAMPLES[`${op.name}.${key}`];
    if (isEnumType(inner)) return enumSamples[inner.name] ?? inner.getValues()[0].value;
    const byName = namedSample(name, samples);
    if (byName !== undefined) return isListType(inner) && !Array.isArray(byName) ? [byName] : byName;
    if (isListType(inner)) {
      const item = value(key, name, inner.ofType, true);
      return item === undefined ? [] : [item];
    }
    if (isInputObjectType(inner)) {
      const object: Record<string, unknown> = {};
      for (const f of Object.values(inner.getFields())) {
        const v = value(`${key}.${f.name}`, f.name, f.type, isNonNullType(f.type));
        if (v !== undefined) object[f.name] = v;
      }
      return object;
    }
    switch (inner.name) {
      case "Int":
      case "Float":
        return 1;
      case "Boolean":
        return false;
      case "DateTime":
        return new Date().toISOString();
      case "JSON":
        return {};
      default:
        return `proof-${name}`;
    }
  };
  const args: Record<string, unknown> = {};
  for (const a of op.field.args) {
    const v = value(a.name, a.name, a.type, isNonNullType(a.type));
    if (v !== undefined) args[a.name] = v;
  }
  return args;
}

// ---------------------------------------------------------------- input rules

/** The resolver of each operation, from the resolvers a running service merged from its domains' plugins. */
export function resolverOf(op: Operation, resolvers: Resolvers): unknown {
  const key = op.type === "query" ? "Query" : "Mutation";
  const fields = (resolvers as Record<string, Record<string, unknown> | undefined>)[key];
  return fields && op.name in fields ? fields[op.name] : undefined;
}

/**
 * Which entity schema checks an operation's input and where the checked value sits in the arguments:
 * under `input` (the default) or the arguments themselves (a rule with `of`).
 */
export function inputSchemaOf(
  op: Operation,
  resolvers: Resolvers,
): { ref: string; base: "input" | "args" } | undefined {
  const rule = inputRuleOf(resolverOf(op, resolvers));
  return rule ? { ref: rule.schema, base: rule.of ? "args" : "input" } : undefined;
}
