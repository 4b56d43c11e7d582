import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { type EgressAllowEntry, parseEgressAllow } from "./egress.ts";

export interface AppConfig {
  /** The repository root: schemas, screens and the built console are found from here. */
  rootDir: string;
  /** Where the service keeps its state (embedded database, generated secrets). */
  dataDir: string;
  host: string;
  port: number;
  /** The base URL users reach the service at; every link in mail and answers is built from it. */
  publicUrl: string | null;
  /**
   * Without PUBLIC_URL, the hosts (`name` for any port, or `name:port`) whose Host header a link may be
   * built from (NODEPLANE_ALLOWED_HOSTS); any other Host gets links to the first of them. Outside
   * production it defaults to the loopback names; in production it must be set if PUBLIC_URL is not.
   */
  allowedHosts: string[];
  /** An external PostgreSQL server; when null the service starts its own embedded one. */
  databaseUrl: string | null;
  redisUrl: string | null;
  /** Where notification e-mail goes; without it messages stay in the outbox the console shows. */
  smtpUrl: string | null;
  /**
   * The key API keys are hashed with (NODEPLANE_ACCESS_TOKEN_KEY); without it, one generated into the
   * data directory. Processes sharing a database must share it (docs/decisions/1700-access-token-hashing.md).
   */
  accessTokenKey: string | null;
  production: boolean;
  /**
   * What this process runs: the GraphQL API and console, the RPC proxy, the stream engine. All three by
   * default; `--role proxy` or NODEPLANE_ROLES=api,engine splits them across processes or machines.
   */
  roles: Record<ProcessRole, boolean>;
  /**
   * Where a process that also serves the API or the proxy runs its engine role (NODEPLANE_ENGINE_PROCESS):
   * "child", a supervised process of its own that runs filters on its thread (`npm start`: main.ts
   * defaults to it), or "inline", in this process with filters in the sandbox process (tests' apps).
   */
  engineProcess: "child" | "inline";
  /** Development mode: the console is served by Vite with hot reload, manifests reload on change. */
  dev: boolean;
  demoPassword: string | null;
  /** Feature flag defaults; each account may override them. */
  featureFlags: Record<string, boolean>;
  sessionDays: number;
  logLevel: string;
  /**
   * Hosts and ranges tenants' webhooks and destinations may reach although the egress policy refuses
   * their kind of address (NODEPLANE_EGRESS_ALLOW); see platform/egress.ts.
   */
  egressAllow: EgressAllowEntry[];
  /**
   * Which peers may name the client's address in X-Forwarded-For (NODEPLANE_TRUST_PROXY): none by
   * default, so a client cannot choose the address its sign-in attempts are counted under.
   */
  trustProxy: TrustProxy;
  /**
   * New accounts one client address may sign up in an hour (NODEPLANE_SIGNUPS_PER_HOUR, 5); its sign-up
   * attempts, failed or not, are bounded at a multiple of it (domains/account/service.ts).
   */
  signUpsPerHour: number;
  /**
   * Whether the token add-ons' test contracts are deployed on local chains at start
   * (NODEPLANE_SEED_TEST_TOKENS=1/0): on by default, off under NODE_ENV=test, whose apps' chains hold what
   * each test puts there.
   */
  seedTestTokens: boolean;
  /**
   * Whether each local chain node gets an archive-mode node beside it, for the Archive add-on
   * (NODEPLANE_ARCHIVE_NODES=1): off by default, since an archive node keeps every block's state on disk
   * (about 150 KB a block: 6.5 GB a day per network at a block every 2 s); the add-on's page says so.
   */
  archiveNodes: boolean;
  /** Most calls the RPC proxy accepts in one JSON-RPC batch (NODEPLANE_MAX_BATCH_CALLS; Geth's default, 1000). */
  maxBatchCalls: number;
  /**
   * The S3 bucket that keeps key-value uploads' parts (NODEPLANE_KV_S3_BUCKET, with _ENDPOINT for an
   * S3-compatible server, _REGION and _FORCE_PATH_STYLE; credentials from the AWS SDK's usual sources).
   * Null: parts are kept under the data directory and served by this service.
   */
  kvUploadS3: KvUploadS3 | null;
  /**
   * Billing: the tax rate invoices charge, in basis points (NODEPLANE_BILLING_TAX_BPS, 0: none; one rate
   * until tax ids and billing addresses land), and how often the billing clock looks for periods that
   * ended (NODEPLANE_BILLING_CLOCK_MS, a minute). `stripe`: the Stripe provider's settings, null when
   * NODEPLANE_STRIPE_SECRET_KEY is not set (the built-in test provider is used then).
   */
  billing: { taxRateBps: number; clockMs: number; stripe: StripeSettings | null };
  /** Crypto charges paid on a chain this service reads (docs/decisions/1630-crypto-charges-on-a-local-chain.md). */
  cryptoCharges: CryptoChargeSettings;
}

/**
 * The Stripe provider: its secret key (NODEPLANE_STRIPE_SECRET_KEY) and, for stripe-mock or a local
 * stand-in, the API's base URL (NODEPLANE_STRIPE_API_URL; null: api.stripe.com).
 */
export interface StripeSettings {
  secretKey: string;
  apiUrl: URL | null;
  /** Where Stripe sends the payer back after authenticating a payment (the console's billing page, from PUBLIC_URL). */
  returnUrl?: string | null;
}

function stripeSettings(env: NodeJS.ProcessEnv): StripeSettings | null {
  const secretKey = env.NODEPLANE_STRIPE_SECRET_KEY?.trim();
  if (!secretKey) return null;
  const text = env.NODEPLANE_STRIPE_API_URL?.trim();
  const returnUrl = env.PUBLIC_URL ? `${env.PUBLIC_URL.replace(/\/$/, "")}/billing` : null;
  if (!text) return { secretKey, apiUrl: null, returnUrl };
  const apiUrl = URL.canParse(text) ? new URL(text) : null;
  if (!apiUrl || (apiUrl.protocol !== "http:" && apiUrl.protocol !== "https:")) {
    throw new Error(`NODEPLANE_STRIPE_API_URL must be an http(s) URL, not ${JSON.stringify(text)}`);
  }
  return { secretKey, apiUrl, returnUrl };
}

export interface CryptoChargeSettings {
  /** The network deposits are made on (NODEPLANE_CRYPTO_NETWORK; a local anvil network by default). */
  network: string;
  /**
   * The BIP-39 mnemonic deposit addresses are derived from (NODEPLANE_CRYPTO_MNEMONIC), a secret: outside
   * production a documented development mnemonic; null in production when unset (no charges are made).
   */
  mnemonic: string | null;
  /** The rate: US cents per ether (NODEPLANE_CRYPTO_USD_CENTS_PER_ETH, 300000: $3,000). */
  usdCentsPerEth: number;
  /** Blocks, counting the one that holds the payment, before it is final (NODEPLANE_CRYPTO_CONFIRMATIONS, 3). */
  confirmations: number;
  /** How long a charge waits for its payment (NODEPLANE_CRYPTO_CHARGE_SECONDS, an hour). */
  chargeMs: number;
  /** How often the watcher looks when the node pushes no new heads (NODEPLANE_CRYPTO_POLL_MS, 2 s). */
  pollMs: number;
}

/**
 * The mnemonic of deposit addresses outside production when none is configured. Public (it is in this
 * repository): what is sent to its addresses on a real chain is anyone's. Never use it on a real chain.
 */
export const DEV_CRYPTO_MNEMONIC = "input close someone bright icon require drip demand buffalo limit stock poet";

export interface KvUploadS3 {
  bucket: string;
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
}

const rootDir = path.resolve(import.meta.dirname, "../..");

/** Feature flags on by default: the areas that are built. */
const defaultFlags: Record<string, boolean> = {
  endpointTags: true,
  errorLogs: true,
  rbac: true,
  multiChain: true,
  accountRps: true,
  newDashboard: true,
  billing4: true,
  quickfunctions: true,
};

function parseFlags(text: string | undefined): Record<string, boolean> {
  const flags = { ...defaultFlags };
  for (const part of (text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const off = part.startsWith("-");
    flags[off ? part.slice(1) : part] = !off;
  }
  return flags;
}

const allRoles = ["api", "proxy", "engine"] as const;
export type ProcessRole = (typeof allRoles)[number];

function parseRoles(text: string | undefined): Record<ProcessRole, boolean> {
  const wanted = (text ?? allRoles.join(","))
    .split(",")
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = wanted.filter((r) => !(allRoles as readonly string[]).includes(r));
  if (unknown.length > 0 || wanted.length === 0) {
    throw new Error(`Roles are ${allRoles.join(", ")}; got ${text}`);
  }
  return { api: wanted.includes("api"), proxy: wanted.includes("proxy"), engine: wanted.includes("engine") };
}

/** Fastify's trustProxy: off, every peer, or the peers in these addresses and ranges. */
export type TrustProxy = boolean | string;

function parseTrustProxy(text: string | undefined): TrustProxy {
  const value = (text ?? "").trim();
  if (value === "" || value === "false" || value === "0") return false;
  if (value === "true") return true;
  for (const part of value.split(",").map((p) => p.trim())) {
    const [address, prefix] = part.split("/");
    if (!isIP(address) || (prefix !== undefined && !/^\d{1,3}$/.test(prefix)))
      throw new Error(`NODEPLANE_TRUST_PROXY takes true or addresses and CIDR ranges; got ${part}`);
  }
  return value;
}

/** Loopback names: where links may point in development when NODEPLANE_ALLOWED_HOSTS is not set. */
export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

function parseAllowedHosts(text: string | undefined): string[] {
  const hosts = (text ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const host of hosts) {
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.test(host))
      throw new Error(`NODEPLANE_ALLOWED_HOSTS takes host names, each with an optional :port; got ${host}`);
  }
  return hosts;
}

function basisPoints(name: string, text: string | undefined): number {
  if (text === undefined || text === "") return 0;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0 || value > 10_000)
    throw new Error(`${name} must be a whole number of basis points from 0 to 10000, got ${text}`);
  return value;
}

function positiveInteger(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${text}`);
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = []): AppConfig {
  const port = env.PORT === undefined ? 8080 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number, got ${env.PORT}`);
  const production = env.NODE_ENV === "production";
  const publicUrl = env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/$/, "") : null;
  const allowedHosts = parseAllowedHosts(env.NODEPLANE_ALLOWED_HOSTS);
  // A link built from a forged Host header would carry a real token to the forger's host.
  if (production && !publicUrl && allowedHosts.length === 0)
    throw new Error(
      "In production set PUBLIC_URL (or NODEPLANE_ALLOWED_HOSTS): links in e-mail and answers are built from it, never from a request's Host header.",
    );
  return {
    rootDir,
    dataDir: path.resolve(env.NODEPLANE_DATA_DIR ?? path.join(rootDir, ".data")),
    host: env.HOST ?? "127.0.0.1",
    port,
    publicUrl,
    allowedHosts: allowedHosts.length > 0 ? allowedHosts : LOOPBACK_HOSTS,
    databaseUrl: env.DATABASE_URL || null,
    redisUrl: env.REDIS_URL || null,
    smtpUrl: env.SMTP_URL || null,
    accessTokenKey: env.NODEPLANE_ACCESS_TOKEN_KEY || null,
    production,
    dev: argv.includes("--dev"),
    engineProcess: env.NODEPLANE_ENGINE_PROCESS === "child" ? "child" : "inline",
    roles: parseRoles(argv.includes("--role") ? argv[argv.indexOf("--role") + 1] : env.NODEPLANE_ROLES),
    demoPassword: env.NODEPLANE_DEMO_PASSWORD || null,
    featureFlags: parseFlags(env.NODEPLANE_FLAGS),
    sessionDays: 14,
    logLevel: env.LOG_LEVEL ?? (env.NODE_ENV === "test" ? "warn" : "info"),
    egressAllow: parseEgressAllow(env.NODEPLANE_EGRESS_ALLOW),
    trustProxy: parseTrustProxy(env.NODEPLANE_TRUST_PROXY),
    signUpsPerHour: positiveInteger("NODEPLANE_SIGNUPS_PER_HOUR", env.NODEPLANE_SIGNUPS_PER_HOUR, 5),
    seedTestTokens: env.NODEPLANE_SEED_TEST_TOKENS ? env.NODEPLANE_SEED_TEST_TOKENS === "1" : env.NODE_ENV !== "test",
    archiveNodes: env.NODEPLANE_ARCHIVE_NODES === "1",
    maxBatchCalls: positiveInteger("NODEPLANE_MAX_BATCH_CALLS", env.NODEPLANE_MAX_BATCH_CALLS, 1000),
    kvUploadS3: env.NODEPLANE_KV_S3_BUCKET
      ? {
          bucket: env.NODEPLANE_KV_S3_BUCKET,
          endpoint: env.NODEPLANE_KV_S3_ENDPOINT || null,
          region: env.NODEPLANE_KV_S3_REGION || "us-east-1",
          forcePathStyle: env.NODEPLANE_KV_S3_FORCE_PATH_STYLE === "true" || Boolean(env.NODEPLANE_KV_S3_ENDPOINT),
        }
      : null,
    billing: {
      taxRateBps: basisPoints("NODEPLANE_BILLING_TAX_BPS", env.NODEPLANE_BILLING_TAX_BPS),
      clockMs: positiveInteger("NODEPLANE_BILLING_CLOCK_MS", env.NODEPLANE_BILLING_CLOCK_MS, 60_000),
      stripe: stripeSettings(env),
    },
    cryptoCharges: {
      network: env.NODEPLANE_CRYPTO_NETWORK || "ethereum-sepolia",
      mnemonic: env.NODEPLANE_CRYPTO_MNEMONIC || (production ? null : DEV_CRYPTO_MNEMONIC),
      usdCentsPerEth: positiveInteger(
        "NODEPLANE_CRYPTO_USD_CENTS_PER_ETH",
        env.NODEPLANE_CRYPTO_USD_CENTS_PER_ETH,
        300_000,
      ),
      confirmations: positiveInteger("NODEPLANE_CRYPTO_CONFIRMATIONS", env.NODEPLANE_CRYPTO_CONFIRMATIONS, 3),
      chargeMs: positiveInteger("NODEPLANE_CRYPTO_CHARGE_SECONDS", env.NODEPLANE_CRYPTO_CHARGE_SECONDS, 3600) * 1000,
      pollMs: positiveInteger("NODEPLANE_CRYPTO_POLL_MS", env.NODEPLANE_CRYPTO_POLL_MS, 2000),
    },
  };
}

/**
 * Makes the data directory, or closes one made before: 0711, so another user can list nothing in it.
 * The embedded PostgreSQL server, which runs as its own user when the service runs as root, needs to
 * pass through it to its own 0700 directory; the sandbox processes, which run as `nobody` then
 * (sandbox/confine.ts), must find nothing: secrets are 0600 and directories of tenants' data 0700.
 */
export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  const { mode, uid } = statSync(dataDir);
  if ((mode & 0o066) !== 0 && uid === process.getuid?.()) chmodSync(dataDir, mode & ~0o066);
}

/**
 * A secret generated once and kept in the data directory, so restarts reuse it.
 * Returns whether it was created now, so the caller can print it the first time.
 */
export function persistentSecret(config: AppConfig, name: string, bytes = 18): { value: string; created: boolean } {
  const file = path.join(config.dataDir, `${name}.secret`);
  if (existsSync(file)) return { value: readFileSync(file, "utf8").trim(), created: false };
  ensureDataDir(config.dataDir);
  const value = randomBytes(bytes).toString("base64url");
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return { value, created: true };
}
