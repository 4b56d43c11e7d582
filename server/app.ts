import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import cookie from "@fastify/cookie";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { GraphQLSchema } from "graphql";
import type { DestinationStream, Logger } from "pino";
import type { ChainNodes, UpstreamMap } from "./dataplane/chain/nodes.ts";
import { startStreamEngine } from "./dataplane/engine/index.ts";
import { createRpcStages } from "./dataplane/metering/stages.ts";
import { mountDataPlane } from "./dataplane/proxy/index.ts";
import type { ServedMethods } from "./dataplane/proxy/served-methods.ts";
import { logSandboxLaunch } from "./dataplane/sandbox/confine.ts";
import { logSandboxTo } from "./dataplane/sandbox/process.ts";
import type { TokenMethod } from "./dataplane/token-index/methods.ts";
import { accountPlugin } from "./domains/account/plugin.ts";
import { SessionCache } from "./domains/account/sessions.ts";
import { addonsPlugin } from "./domains/addons/plugin.ts";
import { capacityOf } from "./domains/addons/service.ts";
import { marketplaceCharges } from "./domains/billing/addon-charges.ts";
import { cryptoChargesPlugin } from "./domains/billing/crypto/plugin.ts";
import { invoiceDocument } from "./domains/billing/invoice-document.ts";
import { builtinProvider } from "./domains/billing/payments/builtin.ts";
import { paymentsPlugin } from "./domains/billing/payments/plugin.ts";
import { billingPlugin } from "./domains/billing/plugin.ts";
import { cataloguePlugin } from "./domains/catalogue/plugin.ts";
import { EndpointListCache } from "./domains/endpoints/list-cache.ts";
import { endpointsPlugin } from "./domains/endpoints/plugin.ts";
import type { EndpointCreatedHook } from "./domains/endpoints/service.ts";
import { errorLogsPlugin } from "./domains/errorlogs/plugin.ts";
import { functionsPlugin } from "./domains/functions/plugin.ts";
import { FunctionRuns } from "./domains/functions/service.ts";
import { streamFunctions } from "./domains/functions/stream-port.ts";
import { inspectorPlugin } from "./domains/inspector/plugin.ts";
import { INSPECT_PATH } from "./domains/inspector/service.ts";
import { kvFilterHelpers } from "./domains/kv/filter-helpers.ts";
import { type PartStorage, partStorage } from "./domains/kv/part-storage.ts";
import { kvPlugin } from "./domains/kv/plugin.ts";
import { databaseLimitSource } from "./domains/ratelimits/limit-source.ts";
import { rateLimitsPlugin } from "./domains/ratelimits/plugin.ts";
import { databaseEndpointRecords } from "./domains/security/endpoint-records.ts";
import { securityPlugin } from "./domains/security/plugin.ts";
import { initialTokenHook } from "./domains/security/service.ts";
import { destinationSigningSecrets } from "./domains/streams/index.ts";
import { streamsPlugin } from "./domains/streams/plugin.ts";
import { DatasetProbes } from "./domains/streams/probes.ts";
import type { StreamsRuntime } from "./domains/streams/runtime.ts";
import { startTokenIndex } from "./domains/token-index/runtime.ts";
import { type AccessKeys, startAccessKeys } from "./domains/tokens/keys.ts";
import { tokensPlugin } from "./domains/tokens/plugin.ts";
import type { KeyHasher } from "./domains/tokens/service.ts";
import { CreditTable } from "./domains/usage/credits.ts";
import { databaseMeterSink } from "./domains/usage/meter-sink.ts";
import { usagePlugin } from "./domains/usage/plugin.ts";
import { webhooksPlugin } from "./domains/webhooks/plugin.ts";
import type { EngineChildEnv } from "./engine.ts";
import { type EnginePorts, enginePorts } from "./engine-ports.ts";
import { GRAPHQL_PATH, graphqlLimits, registerGraphqlApi } from "./graphql/api.ts";
import { formatError, INTERNAL_MESSAGE } from "./graphql/errors.ts";
import { ResolverCollector } from "./graphql/plugin.ts";
import { mergeResolvers, type Resolvers } from "./graphql/resolvers.ts";
import { ResponseCache } from "./graphql/response-cache.ts";
import { DateTime, JSONScalar, loadApiSchema } from "./graphql/schema.ts";
import { type OwnServers, startOwnServers } from "./own-servers.ts";
import { trustedProxies } from "./platform/client-address.ts";
import type { AppConfig } from "./platform/config.ts";
import { API_PREFIXES, isConsoleRoute } from "./platform/console-routes.ts";
import { type Db, openDatabase, runMigrations } from "./platform/db/index.ts";
import type { DatabaseServer } from "./platform/db/postgres.ts";
import { EgressPolicy, formatEgressAllow } from "./platform/egress.ts";
import { DomainEvents } from "./platform/events.ts";
import { relayEvents } from "./platform/events-relay.ts";
import {
  HSTS,
  IMMUTABLE,
  REVALIDATE,
  SECURITY_HEADERS,
  servedOverHttps,
  serviceOrigins,
} from "./platform/http-headers.ts";
import { parseJsonBodies } from "./platform/json-body.ts";
import { createLogger } from "./platform/logger.ts";
import { createMailer, type Mailer } from "./platform/mail.ts";
import { type SecretBox, secretBox } from "./platform/secrets.ts";
import { engineEntry } from "./platform/server-build.mjs";
import { traceStart } from "./platform/start-trace.ts";
import { type SupervisedChild, superviseChild } from "./platform/supervisor.ts";
import { registryPlugin } from "./registry/plugin.ts";
import { RegistryHolder } from "./registry/watch.ts";
import { REST_PREFIX } from "./rest/contracts.ts";
import { restPlugin } from "./rest/plugin.ts";
import { seed, seedLocalChains } from "./seed.ts";

/** The long-lived parts the composition made, for the tests and benches that reach behind the API. */
export interface AppServices {
  events: DomainEvents;
  /** The chain nodes this installation has, by network. */
  upstreams: UpstreamMap;
  /**
   * What the streams, webhooks and functions plugins were given of the running service (the one object
   * they read it from at each call).
   */
  streams: StreamsRuntime;
  /** Where the parts of key-value uploads are kept (the data directory, or S3). */
  kvParts: PartStorage;
  /** The API's answers kept for repeated reads; null when this process serves no API. */
  answers: ResponseCache | null;
  /** The API's resolvers, every domain's merged; null when this process serves no API. */
  resolvers: Resolvers | null;
  /** The token add-on methods (answered from the token index), by name, for the add-on gating to serve. */
  tokenMethods: ReadonlyMap<string, TokenMethod>;
}

export interface App {
  app: FastifyInstance;
  db: Db;
  services: AppServices;
  log: Logger;
  /** What the first start generated and must be shown once (the demo sign-in). */
  firstStart: { demoEmail: string; demoPassword: string; passwordCreated: boolean };
  /** The stream engine's supervised process, once started, when this process runs its engine role there. */
  engineChild(): SupervisedChild | null;
  close(): Promise<void>;
}

export interface BuildOptions {
  /** Where the log is written (standard output when not given); tests read it back. */
  logDestination?: DestinationStream;
  /**
   * A console build under way (`npm start` builds while the database starts): the built console is
   * served once it ends, and the service fails to start when it fails.
   */
  consoleBuilt?: Promise<void>;
  /**
   * The log and the servers `npm start` started before the app's modules loaded (main.ts); made here when
   * not given. The app stops the servers when it closes or fails to start.
   */
  started?: { log: Logger; servers: OwnServers };
}

export async function buildApp(config: AppConfig, options: BuildOptions = {}): Promise<App> {
  const log = options.started?.log ?? createLogger(config.logLevel, options.logDestination);
  const servers = options.started?.servers ?? startOwnServers(config, log);
  const sandboxLog = log.child({ component: "sandbox" });
  logSandboxTo(sandboxLog);
  // While they start: how sandbox processes will be confined is tried here, not at the first filter test.
  logSandboxLaunch(sandboxLog).catch((error) => sandboxLog.warn({ err: error }, "the sandbox launch was not tried"));

  let apiSchema: GraphQLSchema;
  let registry: RegistryHolder;
  let database: DatabaseServer;
  try {
    apiSchema = loadApiSchema();
    // Refuses to start, naming each file, pointer and reason, when a manifest is wrong.
    registry = new RegistryHolder(config.rootDir, apiSchema);
    database = await servers.database;
  } catch (error) {
    await servers.stop();
    throw error;
  }
  traceStart("database ready");
  const db = openDatabase(database.url, 10, (error) => {
    // 57P01: the server is shutting down (Ctrl-C reaches the embedded server too); expected when stopping.
    if ((error as { code?: string }).code === "57P01") log.debug("the database server closed an idle connection");
    else log.warn({ err: error }, "an idle database connection was dropped");
  });
  try {
    return await assemble(config, log, registry, apiSchema, database, db, servers.chains, options.consoleBuilt);
  } catch (error) {
    await db.$client.end().catch(() => undefined);
    await servers.stop();
    throw error;
  }
}

/**
 * How long after the service listens its background work starts (the token indexer, the test-token seed):
 * the first requests (the browser opening the printed address, a readiness probe) are answered before that
 * work loads its clients (~0.1 s of the one thread) and starts its calls.
 */
const BACKGROUND_AFTER_LISTENING_MS = 500;

/**
 * The wiring, in one place: the platform's parts, the stream engine's role, each domain's plugin with what
 * it needs (registerDomains), the GraphQL API once over their resolvers, the RPC proxy with its ports and
 * the console. The data plane declares ports and each is filled here with a domain's adapter: the stream
 * engine's (enginePorts, shared with engine.ts), and the proxy's EndpointRecordSource (security),
 * LimitSource (rate limits), MeterSink and CallPricing (usage).
 */
async function assemble(
  config: AppConfig,
  log: Logger,
  registry: RegistryHolder,
  apiSchema: GraphQLSchema,
  database: DatabaseServer,
  db: Db,
  chainsStarting: Promise<ChainNodes>,
  consoleBuilt: Promise<void> | undefined,
): Promise<App> {
  const { endpointCreatedHooks, firstStart, events, eventsRelay } = await startPlatform(config, log, db);
  traceStart("migrated and seeded");
  const trustsProxy = trustedProxies(config.trustProxy);
  const app = await httpShell(config, log, trustsProxy);
  const chainNodes = await chainsStarting;
  traceStart("chain nodes ready");
  const mailer = createMailer(db, { smtpUrl: config.smtpUrl, log });
  // The functions this process runs (API calls, HTTP calls, FUNCTION destinations of an engine here) share
  // its capacity and its key-value store as qnLib; an engine child makes its own (engine.ts).
  const functionRuns = new FunctionRuns(kvFilterHelpers(db));
  const engine = startEngineRole(app, config, log, db, database, chainNodes, mailer, functionRuns);
  // The token index follows the local chains where the engine role is; the seed's test tokens land there.
  const tokenIndex = startTokenIndex({ db, log, upstreams: chainNodes, index: config.roles.engine });
  // Not needed to answer: started a moment after the service listens (BACKGROUND_AFTER_LISTENING_MS). The
  // seed is awaited at close, before the nodes stop, so a seed under way is not cut off (it takes a few blocks).
  let chainsSeeded: Promise<void> | null = null;
  let background: NodeJS.Timeout | null = null;
  app.server.once("listening", () => {
    background = setTimeout(() => {
      tokenIndex.startIndexing();
      if (config.roles.engine && config.seedTestTokens)
        chainsSeeded = seedLocalChains(chainNodes, config, log).catch((error) =>
          log.warn({ err: error }, "chain: test tokens not deployed"),
        );
    }, BACKGROUND_AFTER_LISTENING_MS);
  });
  const kvParts = partStorage(config);
  // Read by the streams, webhooks and functions APIs at each call; without an engine here, engines
  // elsewhere find activations by polling.
  const streams: StreamsRuntime = {
    upstreams: chainNodes,
    wake: engine.wake,
    mailer,
    destinationDeps: engine.ports.destinationDeps,
    filterHelpers: engine.ports.filterHelpers,
    functions: streamFunctions(functionRuns),
    probes: new DatasetProbes(),
  };
  const services: AppServices = {
    events,
    upstreams: chainNodes,
    streams,
    kvParts: kvParts.storage,
    answers: null,
    resolvers: null,
    tokenMethods: tokenIndex.methods,
  };

  if (config.roles.api) {
    const api = await registerApiRole(app, config, log, apiSchema, {
      db,
      log,
      signUpsPerHour: config.signUpsPerHour,
      events,
      mailer,
      upstreams: chainNodes,
      endpointCreatedHooks,
      registry,
      streams,
      functionRuns,
      kvParts,
      secrets: secretBox(config),
      billing: config.billing,
      cryptoCharges: config.cryptoCharges,
    });
    traceStart("API registered");
    services.resolvers = api.resolvers;
    services.answers = api.answers;
  }

  app.get("/healthz", async () => {
    await db.execute("select 1");
    return { ok: true };
  });
  if (config.roles.proxy)
    await registerProxy(app, config, log, db, events, chainNodes, trustsProxy, tokenIndex.methods);

  const stopWatching = config.roles.api ? await serveConsole(app, config, registry, log, consoleBuilt) : null;
  traceStart("proxy and console registered");

  let closed = false;
  return {
    app,
    db,
    services,
    log,
    firstStart,
    engineChild: engine.child,
    async close() {
      if (closed) return;
      closed = true;
      if (background) clearTimeout(background);
      stopWatching?.();
      await engine.stop();
      await chainsSeeded;
      await tokenIndex.stop();
      await app.close();
      await eventsRelay.close();
      await chainNodes.stop();
      await db.$client.end();
      await database.stop();
    },
  };
}

/** The database migrated and seeded, and the domain events that reach every process. */
async function startPlatform(config: AppConfig, log: Logger, db: Db) {
  await runMigrations(db);
  const endpointCreatedHooks = [initialTokenHook];
  const firstStart = await seed(db, config, log, endpointCreatedHooks);
  const events = new DomainEvents();
  // What the data plane, the session cache and the endpoint lists keep, changed through any process's
  // API, reaches every process.
  const eventsRelay = await relayEvents(
    db.$client,
    events,
    [
      "endpoint.changed",
      "endpoints.listChanged",
      "ratelimits.changed",
      "sessions.changed",
      "viewer.changed",
      "accessTokens.changed",
      "viewers.changed",
    ],
    (message, error) => log.warn({ err: error }, message),
  );
  return { endpointCreatedHooks, firstStart, events, eventsRelay };
}

/**
 * The Fastify instance every role serves from: its logger and request ids, the one error handler, JSON
 * bodies, cookies, and the headers that hold for every answer of the console and the API.
 */
async function httpShell(config: AppConfig, log: Logger, trustsProxy: ReturnType<typeof trustedProxies>) {
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: graphqlLimits.bodyBytes,
    // One rule for which peers name the client: the console's request.ip and the RPC proxy's read it.
    trustProxy: trustsProxy ?? false,
    logController: new LogController({ disableRequestLogging: true }),
    // Unique across processes and restarts: an INTERNAL answer's request id finds its log line.
    genReqId: () => randomUUID(),
    // The route schemas here are Mercurius's own: checking them against the JSON Schema meta-schema
    // compiled that meta-schema at every start (most of ~0.3 s of ajv on a loaded restart's thread).
    ajv: { customOptions: { validateSchema: false } },
  });
  app.setErrorHandler(requestErrorHandler(config, log));
  parseJsonBodies(app);
  await app.register(cookie);
  // Users reach this service over HTTPS (PUBLIC_URL): browsers are told to use nothing else.
  if (servedOverHttps(config)) {
    app.addHook("onRequest", (_request, reply, done) => {
      reply.header("strict-transport-security", HSTS);
      done();
    });
  }
  // The built console's and the API's answers carry the security headers; the RPC proxy's are for other
  // programs. Added here, before the domains' plugins: a plugin's context takes the hooks its parent has
  // when it is registered.
  if (config.roles.api && !config.dev) {
    app.addHook("onRequest", (request, reply, done) => {
      if (!request.url.startsWith("/rpc")) for (const [name, value] of SECURITY_HEADERS) reply.header(name, value);
      done();
    });
  }
  return app;
}

interface EngineRole {
  /** The engine's ports as the domains fill them; the streams API tests filters and destinations with them. */
  ports: EnginePorts;
  /** Tells the engine a stream was activated (this process's engine, or its child). */
  wake(): void;
  child(): SupervisedChild | null;
  stop(): Promise<void>;
}

/**
 * The stream engine's role: in a supervised child process (user code never runs on the thread that serves
 * GraphQL or the proxy), in this process (an engine-only process), or not here. Also where tenants'
 * destinations may connect: not to this service's own ports (its HTTP port once listening, the embedded
 * database, local chain nodes), nor private addresses the operator did not allow.
 */
function startEngineRole(
  app: FastifyInstance,
  config: AppConfig,
  log: Logger,
  db: Db,
  database: DatabaseServer,
  chainNodes: ChainNodes,
  mailer: Mailer,
  functionRuns: FunctionRuns,
): EngineRole {
  const ownPorts = [
    config.port,
    ...(config.databaseUrl ? [] : [Number(new URL(database.url).port)]),
    ...chainNodes
      .list()
      .filter((u) => u.source === "local")
      .map((u) => Number(new URL(u.httpUrl).port)),
  ];
  const egress = new EgressPolicy({ allow: config.egressAllow, ownPorts });
  const ports = enginePorts(db, egress, functionRuns);
  const inChild = config.roles.engine && config.engineProcess === "child" && (config.roles.api || config.roles.proxy);
  let child: SupervisedChild | null = null;
  // The child starts once this process listens: it must not delay readiness.
  app.server.on("listening", () => {
    const address = app.server.address();
    const port = address && typeof address === "object" ? address.port : config.port;
    egress.addOwnPort(port);
    // The one route of this service a tenant's destination may name: the request inspector's.
    const ownOrigins = serviceOrigins(config, port);
    egress.allowOwnRoute({ origins: ownOrigins, path: INSPECT_PATH });
    if (inChild && !child) child = startEngineChild(config, log, database, chainNodes, [...ownPorts, port], ownOrigins);
  });
  const engine =
    config.roles.engine && !inChild
      ? startStreamEngine({ db, ...ports, log, config, upstreams: chainNodes, mailer })
      : null;
  return {
    ports,
    wake: engine?.wake ?? (() => child?.send({ op: "wake" })),
    child: () => child,
    async stop() {
      await engine?.stop();
      await child?.stop();
    },
  };
}

/** The engine's supervised child process (server/engine.ts), told what this process started. */
function startEngineChild(
  config: AppConfig,
  log: Logger,
  database: DatabaseServer,
  chainNodes: ChainNodes,
  ownPorts: number[],
  ownOrigins: string[],
): SupervisedChild {
  const childEnv: EngineChildEnv = {
    NODEPLANE_ENGINE_UPSTREAMS: JSON.stringify(chainNodes.list()),
    NODEPLANE_ENGINE_OWN_PORTS: JSON.stringify(ownPorts),
    NODEPLANE_ENGINE_OWN_ORIGINS: JSON.stringify(ownOrigins),
    NODEPLANE_ENGINE_OWNER: `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}:engine`,
  };
  return superviseChild({
    name: "stream engine",
    args: engineEntry(config.rootDir),
    // This process's settings, also those its caller gave it other than through its environment.
    env: {
      ...process.env,
      ...childEnv,
      DATABASE_URL: database.url,
      NODEPLANE_DATA_DIR: config.dataDir,
      NODEPLANE_EGRESS_ALLOW: formatEgressAllow(config.egressAllow),
      SMTP_URL: config.smtpUrl ?? "",
      LOG_LEVEL: config.logLevel,
    },
    log,
  });
}

/**
 * The API role: each domain's plugin (registerDomains), then GraphQL once over their resolvers with the
 * response cache that reads the same map.
 */
async function registerApiRole(
  app: FastifyInstance,
  config: AppConfig,
  log: Logger,
  apiSchema: GraphQLSchema,
  parts: Omit<DomainParts, "sessions" | "endpointLists" | "accessKeys" | "keyHash">,
): Promise<{ resolvers: Resolvers; answers: ResponseCache }> {
  const { db, events } = parts;
  const sessions = new SessionCache(db, events);
  const accessKeys = await startAccessKeys(db, events, config, log);
  app.addHook("onClose", async () => accessKeys.close());
  const domainResolvers = await registerDomains(app, {
    ...parts,
    sessions,
    endpointLists: new EndpointListCache(db, events),
    accessKeys: accessKeys.keys,
    keyHash: accessKeys.hash,
  });
  const resolvers = mergeResolvers([domainResolvers, { DateTime, JSON: JSONScalar }]);
  // The schema the registry was checked against: built once per start.
  const answers = new ResponseCache(resolvers, apiSchema, graphqlLimits.tokens);
  await registerGraphqlApi(
    app,
    config,
    log,
    db,
    { sessions, answers, accessKeys: accessKeys.keys },
    resolvers,
    apiSchema,
  );
  // After the GraphQL API: the REST routes run its operations.
  await app.register(restPlugin, {
    prefix: REST_PREFIX,
    deps: {
      db,
      config,
      log,
      accessKeys: accessKeys.keys,
      answers,
      downloads: { "invoice-pdf": (accountId, variables) => invoiceDocument(db, accountId, String(variables.id)) },
    },
  });
  return { resolvers, answers };
}

/** The console: the built files, or in development Vite and a registry reloaded on change. Answers how to stop watching. */
async function serveConsole(
  app: FastifyInstance,
  config: AppConfig,
  registry: RegistryHolder,
  log: Logger,
  consoleBuilt: Promise<void> | undefined,
): Promise<(() => void) | null> {
  if (!config.dev) {
    await consoleBuilt;
    await serveBuiltConsole(app, config);
    return null;
  }
  const stopWatching = registry.watch(log);
  await serveConsoleWithVite(app, config);
  return stopWatching;
}

/** The long-lived parts the domains' plugins are given (each takes only what it names). */
interface DomainParts {
  db: Db;
  /** New accounts a client address may make in an hour (config.signUpsPerHour). */
  signUpsPerHour: number;
  log: Logger;
  events: DomainEvents;
  mailer: Mailer;
  sessions: SessionCache;
  upstreams: UpstreamMap;
  endpointLists: EndpointListCache;
  endpointCreatedHooks: EndpointCreatedHook[];
  registry: RegistryHolder;
  streams: StreamsRuntime;
  functionRuns: FunctionRuns;
  kvParts: ReturnType<typeof partStorage>;
  /** Where destination secrets are sealed (the inspector opens security tokens to check signatures). */
  secrets: SecretBox;
  /** Who each x-api-key is, and how keys are hashed. */
  accessKeys: AccessKeys;
  keyHash: KeyHasher;
  /** Billing's settings (tax rate, clock). */
  billing: AppConfig["billing"];
  /** Crypto charges' settings (network, deposit mnemonic, rate, confirmations). */
  cryptoCharges: AppConfig["cryptoCharges"];
}

/**
 * Every area of the API, each a Fastify plugin given what it needs (a new area adds its line here):
 * they add their resolver maps, routes and housekeeping. Answers the merge of their resolvers.
 */
async function registerDomains(app: FastifyInstance, parts: DomainParts): Promise<Resolvers> {
  const { db, log, events, sessions } = parts;
  const streamsDeps = { streams: parts.streams };
  const api = new ResolverCollector();
  await app.register(accountPlugin, {
    api,
    deps: { db, sessions, mailer: parts.mailer, events, signUpsPerHour: parts.signUpsPerHour },
  });
  await app.register(cataloguePlugin, { api, deps: { upstreams: parts.upstreams } });
  await app.register(endpointsPlugin, {
    api,
    deps: { events, endpointLists: parts.endpointLists, endpointCreatedHooks: parts.endpointCreatedHooks },
  });
  await app.register(securityPlugin, { api, deps: { events } });
  await app.register(registryPlugin, { api, deps: { registry: parts.registry } });
  await app.register(streamsPlugin, { api, deps: streamsDeps });
  await app.register(functionsPlugin, {
    api,
    deps: { ...streamsDeps, db, sessions, accessKeys: parts.accessKeys, log, runs: parts.functionRuns },
  });
  await app.register(webhooksPlugin, { api, deps: streamsDeps });
  await app.register(rateLimitsPlugin, { api, deps: { events } });
  await app.register(usagePlugin, { api, deps: {} });
  await app.register(errorLogsPlugin, { api, deps: {} });
  await app.register(inspectorPlugin, {
    api,
    deps: { db, log, signingSecrets: destinationSigningSecrets(parts.secrets) },
  });
  await app.register(kvPlugin, {
    api,
    deps: { db, log, kvParts: parts.kvParts.storage, localParts: parts.kvParts.local },
  });
  await app.register(tokensPlugin, { api, deps: { events, hash: parts.keyHash } });
  await app.register(addonsPlugin, { api, deps: { db, log, events, capacity: capacityOf(parts.upstreams) } });
  // Add-on lines: the marketplace prices each install of the period (billing/addon-charges.ts).
  await app.register(billingPlugin, {
    api,
    deps: { db, log, events, sessions, settings: parts.billing, addons: marketplaceCharges },
  });
  await app.register(cryptoChargesPlugin, {
    api,
    deps: { db, log, events, upstreams: parts.upstreams, settings: parts.cryptoCharges },
  });
  await app.register(paymentsPlugin, {
    api,
    deps: {
      db,
      log,
      events,
      // Stripe when its key is configured; otherwise the built-in test provider, and the console says so.
      // Its client (~0.1 s to load) is loaded only then.
      provider: parts.billing.stripe
        ? (await import("./domains/billing/payments/stripe.ts")).stripeProvider(parts.billing.stripe)
        : builtinProvider(),
      clockMs: parts.billing.clockMs,
    },
  });
  return api.merged();
}

/** The RPC proxy with its rate-limit and meter stages. */
async function registerProxy(
  app: FastifyInstance,
  config: AppConfig,
  log: Logger,
  db: Db,
  events: DomainEvents,
  chainNodes: ChainNodes,
  trustsProxy: ReturnType<typeof trustedProxies>,
  served: ServedMethods,
) {
  const stages = await createRpcStages({
    limits: databaseLimitSource(db),
    meter: { sink: databaseMeterSink(db, events), pricing: new CreditTable() },
    events,
    config,
    log,
  });
  await mountDataPlane(app, {
    records: databaseEndpointRecords(db),
    events,
    upstreams: chainNodes,
    rateLimit: stages.rateLimit,
    meter: stages.meter,
    maxBatchCalls: config.maxBatchCalls,
    trustsProxy: trustsProxy ?? undefined,
    // The token add-ons' methods, answered from the token index (gated like any add-on method).
    served,
    log: (message, error) => log.warn({ err: error }, message),
  });
  app.addHook("onClose", async () => stages.close());
}

/** A refusal of the request itself (a body that is not JSON, too large, a missing file): its status, or undefined. */
function clientStatus(error: FastifyError): number | undefined {
  return typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500
    ? error.statusCode
    : undefined;
}

/**
 * Every failure outside the resolvers (the context builder's session lookup, a refused body, /healthz,
 * the proxy, static files) is answered here: the caller's mistakes as they are, anything else INTERNAL
 * with the request id only, its details in the log.
 */
function requestErrorHandler(config: AppConfig, log: Logger) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0];
    if (config.roles.api && request.routeOptions.url === GRAPHQL_PATH) {
      const errors = formatError({ errors: [error] }, { production: config.production, log, requestId: request.id });
      const internal = errors.some((e) => e.extensions.code === "INTERNAL");
      return reply.code(internal ? 500 : 400).send({ data: null, errors });
    }
    // Fastify's own refusals (a body that is not JSON, too large, a missing file) keep its default answer.
    if (clientStatus(error)) return reply.send(error);
    log.error({ err: error, reqId: request.id, path }, "request failed");
    if (path.startsWith("/rpc/")) {
      return reply.code(500).send({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32603, message: "Internal error", data: { requestId: request.id } },
      });
    }
    return reply.code(500).send({ error: INTERNAL_MESSAGE, code: "INTERNAL", requestId: request.id });
  };
}

async function serveBuiltConsole(app: FastifyInstance, config: AppConfig) {
  const distDir = path.join(config.rootDir, "dist");
  const indexFile = path.join(distDir, "index.html");
  if (!existsSync(indexFile)) {
    app.log.warn("the console is not built (run npm run build); only the API is served");
    return;
  }
  const { default: fastifyStatic } = await import("@fastify/static");
  const assetsDir = path.join(distDir, "assets") + path.sep;
  // Files are looked up per request, so a rebuilt console is served without a restart. The build wrote a
  // brotli and a gzip copy of each text file; the one the browser accepts is sent as it is.
  await app.register(fastifyStatic, {
    root: distDir,
    wildcard: true,
    index: "index.html",
    preCompressed: true,
    dotfiles: "ignore",
    cacheControl: false,
    setHeaders: (reply, file) => {
      reply.header("cache-control", file.startsWith(assetsDir) ? IMMUTABLE : REVALIDATE);
    },
  });
  // Every console route is the single-page app; API paths that reach here are unknown.
  app.setNotFoundHandler((request, reply) => {
    if (!isConsoleRoute(request.method, request.url)) return reply.code(404).send({ error: "Not found" });
    return reply.sendFile("index.html");
  });
}

async function serveConsoleWithVite(app: FastifyInstance, config: AppConfig) {
  const [{ default: middie }, { createServer }] = await Promise.all([import("@fastify/middie"), import("vite")]);
  await app.register(middie);
  const vite = await createServer({ root: config.rootDir, server: { middlewareMode: true }, appType: "spa" });
  app.use((req, res, next) => {
    // Vite serves files and the page (GET, HEAD); other methods are the API's (a function's HTTP address).
    if (API_PREFIXES.some((p) => req.url?.startsWith(p)) || (req.method !== "GET" && req.method !== "HEAD"))
      return next();
    vite.middlewares(req, res, next);
  });
  app.addHook("onClose", async () => vite.close());
}
