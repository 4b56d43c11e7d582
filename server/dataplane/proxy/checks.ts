import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { forwardedClient, normaliseIp } from "../../platform/client-address.ts";
import { type CompiledEndpoint, hashToken, referrerHost, remember } from "./endpoint.ts";
import { type JsonRpcCall, type Refusal, refusal } from "./jsonrpc.ts";

/** The parts of a request the checks read (node's IncomingMessage, or the fast lane's request). */
type RequestParts = { headers: IncomingHttpHeaders; socket: { remoteAddress?: string } };

/**
 * The client's address: the configured header when the endpoint's ipCustomHeader option is on, else the
 * socket's peer, or behind the operator's trusted proxies (`trustsProxy`, NODEPLANE_TRUST_PROXY) the
 * client they name in X-Forwarded-For.
 */
export function clientIpOf(
  endpoint: CompiledEndpoint,
  req: RequestParts,
  trustsProxy: ((address: string) => boolean) | undefined,
): string {
  const { options, ipCustomHeaderName } = endpoint.record;
  if (options.ipCustomHeader && ipCustomHeaderName) {
    const value = req.headers[ipCustomHeaderName];
    const text = Array.isArray(value) ? value[0] : value;
    // Behind a CDN the header may hold a chain "client, proxy1, proxy2": the first is the client.
    const first = text?.split(",")[0]?.trim();
    if (first && isIP(normaliseIp(first))) return normaliseIp(first);
  }
  const peer = normaliseIp(req.socket.remoteAddress ?? "");
  return trustsProxy ? forwardedClient(peer, req.headers["x-forwarded-for"], trustsProxy) : peer;
}

export function corsHeaders(req: Pick<RequestParts, "headers">): Record<string, string> {
  const origin = req.headers.origin;
  return {
    "access-control-allow-origin": origin ?? "*",
    "access-control-allow-methods": "POST, OPTIONS",
    "access-control-allow-headers": "content-type, authorization, x-token, x-request-id",
    // So a browser app can read the id its error logs are stored under.
    "access-control-expose-headers": "x-request-id",
    "access-control-max-age": "86400",
    vary: "origin",
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function referrerAllowed(endpoint: CompiledEndpoint, headers: IncomingHttpHeaders): boolean {
  for (const value of [headerText(headers.origin), headerText(headers.referer)]) {
    if (!value || value === "null") continue;
    const host = referrerHost(value);
    if (!host) continue;
    if (endpoint.referrerHosts.has(host)) return true;
    const name = host.replace(/:\d+$/, "");
    if (endpoint.referrerHosts.has(name)) return true;
    for (const suffix of endpoint.referrerSuffixes) if (name.endsWith(suffix)) return true;
  }
  return false;
}

/**
 * The request-level security options, in order: IP allowlist, referrers, tokens, JWTs.
 * Each option that is on must pass; an option that is off does not apply. Returns the first refusal.
 */
export function checkAccess(
  endpoint: CompiledEndpoint,
  headers: IncomingHttpHeaders,
  clientIp: string,
  pathToken: string | undefined,
): Refusal | undefined | Promise<Refusal | undefined> {
  const { options } = endpoint.record;
  if (options.ips) {
    let allowed = endpoint.ipDecisions.get(clientIp);
    if (allowed === undefined) {
      const family = isIP(clientIp);
      const listed = family !== 0 && endpoint.ipRules.check(clientIp, family === 4 ? "ipv4" : "ipv6");
      allowed = remember(endpoint.ipDecisions, clientIp, listed);
    }
    if (!allowed) return refusal("IP_NOT_ALLOWED");
  }
  if (options.referrers && !referrerAllowed(endpoint, headers)) return refusal("REFERRER_NOT_ALLOWED");
  if (options.tokens) {
    const token = pathToken || headerText(headers["x-token"]);
    if (!token) return refusal("TOKEN_REQUIRED");
    let allowed = endpoint.tokenDecisions.get(token);
    if (allowed === undefined)
      allowed = remember(endpoint.tokenDecisions, token, endpoint.tokenHashes.has(hashToken(token)));
    if (!allowed) return refusal("TOKEN_REQUIRED");
  }
  if (options.jwts) {
    const auth = headerText(headers.authorization);
    const jwt = auth?.startsWith("Bearer ") ? auth.slice(7).trim() : undefined;
    if (!jwt) return refusal("JWT_REQUIRED");
    // Only JWT verification is asynchronous; every other check stays synchronous on the hot path.
    return endpoint.jwt.verify(jwt).then((ok) => (ok ? undefined : refusal("JWT_REQUIRED")));
  }
  return undefined;
}

const transactionMethods = new Set([
  "eth_sendTransaction",
  "eth_call",
  "eth_estimateGas",
  "eth_signTransaction",
  "eth_createAccessList",
]);

type ParseTransaction = typeof import("viem").parseTransaction;
let parseTransaction: ParseTransaction | undefined;
let viemLoading: Promise<ParseTransaction> | undefined;

/**
 * viem's transaction parser, loaded with the first signed transaction a chain-enforcing endpoint sees:
 * importing viem takes a large part of a start, and most starts never parse one.
 */
function loadParseTransaction(): Promise<ParseTransaction> {
  viemLoading ??= import("viem").then((viem) => {
    parseTransaction = viem.parseTransaction;
    return viem.parseTransaction;
  });
  return viemLoading;
}

function rawTransactionChainId(parse: ParseTransaction, raw: string): number | undefined {
  try {
    return parse(raw as `0x${string}`).chainId;
  } catch {
    return undefined;
  }
}

/**
 * The chain id a call names, when it names one: a signed raw transaction's, or a transaction object's
 * chainId. A promise only while the transaction parser is still loading.
 */
export function chainIdOfCall(call: JsonRpcCall): number | undefined | Promise<number | undefined> {
  const params = Array.isArray(call.params) ? call.params : [];
  if (call.method === "eth_sendRawTransaction" || call.method === "eth_sendRawTransactionSync") {
    const raw = params[0];
    if (typeof raw !== "string" || !raw.startsWith("0x")) return undefined;
    if (parseTransaction) return rawTransactionChainId(parseTransaction, raw);
    return loadParseTransaction().then((parse) => rawTransactionChainId(parse, raw));
  }
  if (transactionMethods.has(call.method)) {
    const tx = params[0] as { chainId?: unknown } | undefined;
    const id = tx && typeof tx === "object" ? tx.chainId : undefined;
    if (typeof id === "string" && /^0x[0-9a-f]+$/i.test(id)) return Number.parseInt(id, 16);
    if (typeof id === "number") return id;
  }
  return undefined;
}

/**
 * Methods no endpoint forwards, whatever its settings: the node's own administration, mining, state
 * editing and test controls (anvil_, hardhat_, evm_, …: a call could rewrite balances or reset the chain
 * every tenant shares), and signing with keys the node holds (a dev node's accounts are unlocked), which
 * the public providers do not serve either: clients sign and send raw transactions.
 */
const NODE_ONLY_NAMESPACES = new Set([
  "anvil",
  "hardhat",
  "evm",
  "ganache",
  "admin",
  "personal",
  "miner",
  "engine",
  "clique",
  // EIP-5792 and other wallet methods: a wallet's, signing with the keys it holds.
  "wallet",
]);
const NODE_ONLY_METHODS = new Set([
  "eth_sendTransaction",
  "eth_sendTransactionSync",
  // anvil's: sends from any address without its signature.
  "eth_sendUnsignedTransaction",
  "eth_sign",
  "eth_signTransaction",
  "eth_signTypedData",
  "eth_signTypedData_v3",
  "eth_signTypedData_v4",
  "eth_submitWork",
  "eth_submitHashrate",
  "debug_setHead",
]);

/** Whether the service refuses a method on every endpoint: its namespace (before the first "_") or the method. */
export function nodeOnlyMethod(method: string): boolean {
  const namespaceEnd = method.indexOf("_");
  return (namespaceEnd > 0 && NODE_ONLY_NAMESPACES.has(method.slice(0, namespaceEnd))) || NODE_ONLY_METHODS.has(method);
}

/** The add-on a call's method needs and this endpoint has not installed: by the method's name, then its namespace. */
function missingAddon(endpoint: CompiledEndpoint, method: string): string | undefined {
  const byName = endpoint.lockedMethods.get(method);
  if (byName !== undefined || endpoint.lockedNamespaces.size === 0) return byName;
  const namespaceEnd = method.indexOf("_");
  return namespaceEnd > 0 ? endpoint.lockedNamespaces.get(method.slice(0, namespaceEnd)) : undefined;
}

/**
 * The call-level checks: methods no endpoint serves, add-ons not installed, then the options: disabled methods, the request
 * filter, the chain/network match. A promise only for a signed transaction seen before the transaction
 * parser has loaded (chainIdOfCall).
 */
export function checkCall(
  endpoint: CompiledEndpoint,
  call: JsonRpcCall,
): Refusal | undefined | Promise<Refusal | undefined> {
  if (nodeOnlyMethod(call.method)) {
    return refusal("METHOD_NOT_AVAILABLE", `The method ${call.method} is not available on this service.`);
  }
  if (endpoint.lockedMethods.size > 0 || endpoint.lockedNamespaces.size > 0) {
    const addon = missingAddon(endpoint, call.method);
    if (addon !== undefined)
      return refusal(
        "ADDON_REQUIRED",
        `The method ${call.method} needs the ${addon} add-on: install it on this endpoint in the console.`,
        { addon },
      );
  }
  if (endpoint.disabledMethods.size > 0 && endpoint.disabledMethods.has(call.method)) {
    return refusal("METHOD_DISABLED", `The method ${call.method} is disabled on this endpoint.`);
  }
  const { options, chainId, network } = endpoint.record;
  if (options.requestFilters && !endpoint.filterMethods.has(call.method)) {
    return refusal("METHOD_NOT_IN_FILTER", `The method ${call.method} is not in this endpoint's request filter.`);
  }
  if (options.enforceChainNetwork && chainId !== null) {
    const wrongChain = (named: number | undefined): Refusal | undefined =>
      named !== undefined && named !== chainId
        ? refusal(
            "WRONG_CHAIN",
            `This transaction is for chain id ${named}, but this endpoint serves ${network} (chain id ${chainId}).`,
            { expectedChainId: chainId, chainId: named },
          )
        : undefined;
    const named = chainIdOfCall(call);
    return named instanceof Promise ? named.then(wrongChain) : wrongChain(named);
  }
  return undefined;
}
