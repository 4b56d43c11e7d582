import { randomBytes, timingSafeEqual } from "node:crypto";
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import type { Duplex } from "node:stream";
import tls from "node:tls";

/**
 * The egress policy: where the service may connect when a tenant names the place (webhook URLs,
 * destination hosts and endpoints, their connection tests). Loopback, private, link-local, multicast,
 * unspecified and reserved addresses, and this service's own ports, are refused unless the operator
 * allows a host or range with NODEPLANE_EGRESS_ALLOW. The check is on the address actually connected
 * to: host names are resolved by the policy's own lookup at connect time, so a name that resolves to a
 * public address when checked and a private one when connecting (DNS rebinding) does not pass.
 */

export const EGRESS_ALLOW_SETTING = "NODEPLANE_EGRESS_ALLOW";

export type AddressClass = "loopback" | "private" | "link-local" | "multicast" | "unspecified" | "reserved" | "public";

const refusedRanges: [AddressClass, string, number, "ipv4" | "ipv6"][] = [
  ["unspecified", "0.0.0.0", 8, "ipv4"],
  ["private", "10.0.0.0", 8, "ipv4"],
  ["private", "100.64.0.0", 10, "ipv4"],
  ["loopback", "127.0.0.0", 8, "ipv4"],
  ["link-local", "169.254.0.0", 16, "ipv4"],
  ["private", "172.16.0.0", 12, "ipv4"],
  ["reserved", "192.0.0.0", 24, "ipv4"],
  ["reserved", "192.0.2.0", 24, "ipv4"],
  ["private", "192.168.0.0", 16, "ipv4"],
  ["reserved", "198.18.0.0", 15, "ipv4"],
  ["reserved", "198.51.100.0", 24, "ipv4"],
  ["reserved", "203.0.113.0", 24, "ipv4"],
  ["multicast", "224.0.0.0", 4, "ipv4"],
  ["reserved", "240.0.0.0", 4, "ipv4"],
  ["unspecified", "::", 128, "ipv6"],
  ["loopback", "::1", 128, "ipv6"],
  ["reserved", "100::", 64, "ipv6"],
  // Local-use NAT64 (RFC 8215): the operator's own translator, to IPv4 addresses of its choosing.
  ["private", "64:ff9b:1::", 48, "ipv6"],
  ["reserved", "2001:db8::", 32, "ipv6"],
  ["private", "fc00::", 7, "ipv6"],
  ["link-local", "fe80::", 10, "ipv6"],
  ["private", "fec0::", 10, "ipv6"],
  ["multicast", "ff00::", 8, "ipv6"],
];

const classLists = new Map<AddressClass, net.BlockList>();
for (const [kind, network, prefix, family] of refusedRanges) {
  let list = classLists.get(kind);
  if (!list) {
    list = new net.BlockList();
    classLists.set(kind, list);
  }
  list.addSubnet(network, prefix, family);
}

/** An IPv6 address as WHATWG URL writes it: lower case, zeros compressed, embedded IPv4 in hex. */
function canonicalIPv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** An IPv6 address's eight 16-bit groups (its embedded IPv4 form, if any, already in hex: canonicalIPv6). */
function ipv6Groups(canonical: string): number[] {
  const [head, tail] = canonical.includes("::") ? canonical.split("::") : [canonical, null];
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const front = parse(head);
  if (tail === null) return front;
  const back = parse(tail);
  return [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
}

const fromGroups = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join(".");

/**
 * The IPv4 address an IPv6 form carries: mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d),
 * compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::/48); null for others.
 */
export function embeddedIPv4(ipv6: string): string | null {
  const g = ipv6Groups(canonicalIPv6(ipv6));
  if (g.length !== 8) return null;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (g[0] === 0x2002) return fromGroups(g[1], g[2]);
  const last = fromGroups(g[6], g[7]);
  if (zeros(0, 5) && g[5] === 0xffff) return last;
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return last;
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return last;
  if (zeros(0, 6) && g[6] !== 0) return last;
  return null;
}

/** An address without brackets or an IPv6 zone ("fe80::1%eth0"). */
function bareAddress(address: string): string {
  return address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
}

/** One spelling per address, so addresses compare as strings. */
function addressKey(address: string): string {
  const bare = bareAddress(address);
  return net.isIPv6(bare) ? canonicalIPv6(bare) : bare;
}

/** What kind of address `address` (an IP address) is; "public" when no refused range holds it. */
export function classifyAddress(address: string): AddressClass {
  const bare = bareAddress(address);
  const family = net.isIP(bare);
  if (family === 0) throw new Error(`${address} is not an IP address`);
  const v4 = family === 6 ? embeddedIPv4(bare) : null;
  if (v4 !== null) return classifyAddress(v4);
  for (const [kind, list] of classLists) if (list.check(bare, family === 4 ? "ipv4" : "ipv6")) return kind;
  return "public";
}

const article = (kind: AddressClass) => (kind === "unspecified" ? "an" : "a");

/** Names that always mean this machine (RFC 6761), refused without asking DNS. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/** The connection the policy refused; `message` says why and what the operator can do. */
export class EgressRefused extends Error {
  readonly code = "EGRESS_REFUSED";
}

/** One entry of NODEPLANE_EGRESS_ALLOW: a host name, an IP address, or a CIDR range. */
export type EgressAllowEntry =
  | { kind: "host"; name: string }
  | { kind: "range"; network: string; prefix: number; family: "ipv4" | "ipv6" };

const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;

/** The entries as NODEPLANE_EGRESS_ALLOW text, which parseEgressAllow reads back (for a child process). */
export function formatEgressAllow(entries: EgressAllowEntry[]): string {
  return entries.map((e) => (e.kind === "host" ? e.name : `${e.network}/${e.prefix}`)).join(",");
}

/** Reads NODEPLANE_EGRESS_ALLOW (comma-separated); throws naming the entry that is neither a host, an address nor a range. */
export function parseEgressAllow(text: string | undefined): EgressAllowEntry[] {
  const entries: EgressAllowEntry[] = [];
  for (const raw of (text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address, prefixText, extra] = raw.split("/");
    const bare = bareAddress(address);
    const family = net.isIP(bare);
    if (family !== 0) {
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (extra !== undefined || !/^\d+$/.test(prefixText ?? String(max)) || prefix > max)
        throw new Error(`${EGRESS_ALLOW_SETTING}: "${raw}" is not a host name, IP address or CIDR range`);
      entries.push({ kind: "range", network: bare, prefix, family: family === 4 ? "ipv4" : "ipv6" });
    } else if (prefixText === undefined && HOST_NAME.test(raw.toLowerCase())) {
      entries.push({ kind: "host", name: raw.toLowerCase().replace(/\.$/, "") });
    } else {
      throw new Error(`${EGRESS_ALLOW_SETTING}: "${raw}" is not a host name, IP address or CIDR range`);
    }
  }
  return entries;
}

type AgentCallback = (error: Error | null, socket: Duplex) => void;

type LookupAll = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

export interface EgressPolicyOptions {
  allow?: readonly EgressAllowEntry[];
  /** Ports this service listens on (more are added with addOwnPort once known). */
  ownPorts?: Iterable<number>;
  /** How host names are resolved; dns.lookup (the system resolver) unless a test names another. */
  resolve?: LookupAll;
  /** This machine's addresses; its network interfaces' unless a test names others. */
  machineAddresses?: Iterable<string>;
}

/**
 * A route of this service a tenant's delivery may reach although its address is this machine (the
 * request inspector): URLs on one of `origins` (scheme, host and port exactly as this service makes
 * them) whose path matches `path`, with no query, credentials or fragment.
 */
export interface OwnRoute {
  origins: readonly string[];
  path: RegExp;
}

/** The addresses of this machine's interfaces, where the service's own ports are found. */
function ownAddresses(): Set<string> {
  const addresses = new Set<string>();
  for (const list of Object.values(os.networkInterfaces()))
    for (const i of list ?? []) addresses.add(addressKey(i.address));
  return addresses;
}

/**
 * The one place the rule is applied. Clients that connect where a tenant says take their sockets,
 * lookups and agents from here: `connect`/`tlsConnect` (node:net and node:tls options), `socket`
 * (a net.Socket whose `connect` is checked, for drivers that take a stream), `httpAgent`/`httpsAgent`
 * (for SDKs) and `openProxy` (for a client that takes only proxy settings). There is no "check, then
 * let the client connect by itself": the name could resolve elsewhere the second time (DNS rebinding).
 */
export class EgressPolicy {
  private readonly allowedRanges = new net.BlockList();
  private readonly allowedHosts = new Set<string>();
  private readonly ownPorts = new Set<number>();
  private readonly machineAddresses: Set<string>;
  private readonly resolver: LookupAll;
  private ownRoute: OwnRoute | null = null;

  constructor(options: EgressPolicyOptions = {}) {
    for (const entry of options.allow ?? []) {
      if (entry.kind === "host") this.allowedHosts.add(entry.name);
      else this.allowedRanges.addSubnet(entry.network, entry.prefix, entry.family);
    }
    for (const port of options.ownPorts ?? []) this.addOwnPort(port);
    this.resolver = options.resolve ?? (dns.lookup as LookupAll);
    this.machineAddresses = options.machineAddresses
      ? new Set([...options.machineAddresses].map(addressKey))
      : ownAddresses();
  }

  /** A port this service listens on: refused on this machine's addresses whatever the allow list says. */
  addOwnPort(port: number): void {
    if (port > 0) this.ownPorts.add(port);
  }

  /** The one route of this service tenants may name (replaces the one set before: origins change with the port). */
  allowOwnRoute(route: OwnRoute): void {
    this.ownRoute = { origins: route.origins.map((o) => new URL(o).origin), path: route.path };
  }

  /**
   * Whether `url` is this service's own route as allowed with allowOwnRoute. The origin is compared as
   * written, never resolved: a name that resolves to this machine is not this service's origin. The
   * path is compared after the URL is parsed (dot segments removed), so "/inspect/x/../../graphql" is
   * "/graphql".
   */
  isOwnRoute(url: string | URL): boolean {
    const route = this.ownRoute;
    if (!route) return false;
    let parsed: URL;
    try {
      parsed = typeof url === "string" ? new URL(url) : url;
    } catch {
      return false;
    }
    if (parsed.username || parsed.password || parsed.search || parsed.hash) return false;
    return route.origins.includes(parsed.origin) && route.path.test(parsed.pathname);
  }

  /**
   * A forward proxy for one client that can only be pointed at a proxy (snowflake-sdk): listens on
   * 127.0.0.1 on a port of its own, takes CONNECT with a credential made for this client alone, and
   * makes every connection with this policy's `connect`, so the address checked is the one connected
   * to. Its port counts as this service's own while it is open, so a tenant-named connection cannot
   * reach it. Close it when the client is done.
   */
  async openProxy(options: EgressProxyOptions = {}): Promise<EgressProxy> {
    const proxy = await EgressProxy.open(this, options, (port) => this.ownPorts.delete(port));
    this.ownPorts.add(proxy.port);
    return proxy;
  }

  /**
   * Why connecting to `address` (an IP address) on `port` is refused, or null when it is not. `host`
   * is the name asked for, when there was one (an allowed name allows whatever it resolves to).
   */
  refusal(address: string, port: number, host?: string): string | null {
    const bare = bareAddress(address).toLowerCase();
    const kind = classifyAddress(bare);
    const v4 = net.isIPv6(bare) ? embeddedIPv4(bare) : null;
    const mine = this.machineAddresses.has(addressKey(bare)) || (v4 !== null && this.machineAddresses.has(v4));
    if (kind === "public" && !mine) return null;
    // This service's own ports are refused even where an operator allowed the address; where the address
    // is refused anyway, the answer does not name the port, so it tells no port of ours from another.
    const ownPort = this.ownPorts.has(port) && (mine || kind === "loopback" || kind === "unspecified");
    const allowed =
      (host !== undefined && this.allowedHosts.has(host.toLowerCase().replace(/\.$/, ""))) ||
      this.allowedRanges.check(bare, net.isIPv4(bare) ? "ipv4" : "ipv6") ||
      (v4 !== null && this.allowedRanges.check(v4, "ipv4"));
    if (allowed)
      return ownPort ? `refused by the egress policy: ${bare} port ${port} is this service's own port` : null;
    const form = v4 !== null ? ` (the IPv4 address ${v4} in an IPv6 form)` : "";
    // A public address of this machine reaches whatever listens on its other interfaces' ports.
    const kindText = kind === "public" ? "an address of this machine" : `${article(kind)} ${kind} address`;
    const what = `${kindText}${form}; an operator can allow it with ${EGRESS_ALLOW_SETTING}`;
    const named = host !== undefined && bareAddress(host).toLowerCase() !== bare;
    return named
      ? `refused by the egress policy: ${host} resolves to ${bare}, ${what}`
      : `refused by the egress policy: ${bare} is ${what}`;
  }

  /**
   * Checks what can be checked without resolving: an IP address, or a name that always means this
   * machine ("localhost"). Throws EgressRefused; other names are checked when they are resolved.
   */
  checkHost(host: string, port: number): void {
    const bare = bareAddress(host);
    if (net.isIP(bare) !== 0) {
      const reason = this.refusal(bare, port);
      if (reason) throw new EgressRefused(reason);
    } else if (isLocalhostName(bare) && !this.allowedHosts.has(bare.toLowerCase().replace(/\.$/, ""))) {
      throw new EgressRefused(
        `refused by the egress policy: ${bare} is a loopback address; an operator can allow it with ${EGRESS_ALLOW_SETTING}`,
      );
    }
  }

  /** A lookup for net/tls connections to `port`: resolves with the policy's resolver and keeps only allowed addresses. */
  lookup(port: number): net.LookupFunction {
    return (hostname, options, callback) => {
      try {
        this.checkHost(hostname, port);
      } catch (error) {
        callback(error as EgressRefused, "", 0);
        return;
      }
      this.resolver(hostname, { family: options.family, hints: options.hints, all: true }, (error, addresses) => {
        if (error) {
          callback(error, "", 0);
          return;
        }
        const allowed = addresses.filter((a) => this.refusal(a.address, port, hostname) === null);
        if (allowed.length === 0) {
          const reason = addresses.length > 0 ? this.refusal(addresses[0].address, port, hostname) : null;
          callback(new EgressRefused(reason ?? `${hostname} has no address`), "", 0);
        } else if (options.all) callback(null, allowed);
        else callback(null, allowed[0].address, allowed[0].family);
      });
    };
  }

  /** net.connect with the policy applied; a refused address fails the socket before any packet is sent. */
  connect(options: net.TcpNetConnectOpts): net.Socket {
    const refused = this.refusedNow(options.host ?? "localhost", options.port);
    if (refused) {
      const socket = new net.Socket();
      process.nextTick(() => socket.destroy(refused));
      return socket;
    }
    return net.connect({ ...options, lookup: this.lookup(options.port) });
  }

  /** tls.connect with the policy applied (SNI and certificate checks use the host named, not the address). */
  tlsConnect(options: tls.ConnectionOptions & { host: string; port: number }): tls.TLSSocket {
    const refused = this.refusedNow(options.host, options.port);
    if (refused) {
      const socket = new tls.TLSSocket(new net.Socket());
      process.nextTick(() => socket.destroy(refused));
      return socket;
    }
    return tls.connect({ ...options, lookup: this.lookup(options.port) });
  }

  /**
   * A socket whose `connect(port, host)` applies the policy, for drivers that connect a stream they are
   * given (pg). A local socket path (`connect(path)`) is refused: it is this machine.
   */
  socket(): net.Socket {
    const policy = this;
    const socket = new net.Socket();
    const connect = socket.connect.bind(socket) as (options: net.TcpNetConnectOpts) => net.Socket;
    socket.connect = function (this: net.Socket, ...args: unknown[]): net.Socket {
      const [first, second] = args;
      const port = typeof first === "string" && /^\d+$/.test(first) ? Number(first) : first;
      if (typeof port === "number" && typeof second === "string") {
        const refused = policy.refusedNow(second, port);
        if (refused) {
          process.nextTick(() => socket.destroy(refused));
          return socket;
        }
        return connect({ port, host: second, lookup: policy.lookup(port) });
      }
      process.nextTick(() =>
        socket.destroy(new EgressRefused("refused by the egress policy: a local socket path is this machine")),
      );
      return socket;
    } as net.Socket["connect"];
    return socket;
  }

  /** An http agent whose connections apply the policy, for SDK clients. */
  httpAgent(options: http.AgentOptions = {}): http.Agent {
    const connection = this.agentConnection(80);
    return new (class extends http.Agent {
      override createConnection(connectOptions: http.ClientRequestArgs, callback?: AgentCallback) {
        return connection(connectOptions, callback, (checked) => super.createConnection(checked, callback));
      }
    })(options);
  }

  /** An https agent whose connections apply the policy (SNI and certificates use the host named). */
  httpsAgent(options: https.AgentOptions = {}): https.Agent {
    const connection = this.agentConnection(443);
    return new (class extends https.Agent {
      override createConnection(connectOptions: http.ClientRequestArgs, callback?: AgentCallback) {
        return connection(connectOptions, callback, (checked) => super.createConnection(checked, callback));
      }
    })(options);
  }

  /**
   * An agent's createConnection: a refused address or local name fails through the callback before
   * connecting; anything else connects with the policy's lookup.
   */
  private agentConnection(defaultPort: number) {
    return (
      connectOptions: http.ClientRequestArgs,
      callback: AgentCallback | undefined,
      connect: (checked: http.ClientRequestArgs) => Duplex | null | undefined,
    ): Duplex | null | undefined => {
      const port = Number(connectOptions.port ?? defaultPort);
      const refused = this.refusedNow(connectOptions.host ?? "localhost", port);
      if (refused) {
        if (callback) process.nextTick(() => callback(refused, new net.Socket()));
        return undefined;
      }
      return connect({ ...connectOptions, lookup: this.lookup(port) });
    };
  }

  /** The refusal checkHost finds, as a value. */
  private refusedNow(host: string, port: number): EgressRefused | null {
    try {
      this.checkHost(host, port);
      return null;
    } catch (error) {
      if (error instanceof EgressRefused) return error;
      throw error;
    }
  }
}

export interface EgressProxyOptions {
  /**
   * The one place (host and port as named) that plain-http requests may be forwarded to. Clients send
   * those without a credential (an http agent pointed at a proxy sends the request itself, no
   * CONNECT), so the proxy forwards them to this place only; without it they are refused.
   */
  plainTarget?: { host: string; port: number };
}

/**
 * The answer to a request the proxy did not forward; the client sees the reason as the response. A
 * refusal is 421, not 403: clients retry 403 from cloud storage (snowflake-sdk's result chunks, ten
 * times over minutes), and a refusal does not change until the allow list does.
 */
const PROXY_STATUS = { malformed: 400, refused: 421, unauthorized: 407, failed: 502 } as const;

/** "host:port" as a CONNECT line or a Host header writes it, IPv6 in brackets; null when it is not one. */
function parseAuthority(authority: string, defaultPort?: number): { host: string; port: number } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(authority);
  if (!match) return null;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port === undefined || port < 1 || port > 65535) return null;
  return { host: bareAddress(match[1]), port };
}

/** Headers for one hop only (RFC 9110 7.6.1), not passed on by a proxy. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function endToEndHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase()),
  );
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_HEADERS.has(name) && !named.has(name)),
  ) as http.OutgoingHttpHeaders;
}

/** See EgressPolicy.openProxy. */
export class EgressProxy {
  readonly host = "127.0.0.1";
  /** The credential CONNECT must carry (Basic); random for each proxy, never shown. */
  readonly user = "egress";
  readonly password = randomBytes(24).toString("hex");
  private readonly expectedAuthorization: Buffer;
  private readonly server: http.Server;
  /** Plain-http requests go on through the policy's agent. */
  private readonly plainAgent: http.Agent;
  private readonly tunnels = new Set<net.Socket>();
  private listeningPort = 0;
  private refusal: EgressRefused | null = null;
  private failure: Error | null = null;

  private constructor(
    private readonly policy: EgressPolicy,
    private readonly options: EgressProxyOptions,
    private readonly released: (port: number) => void,
  ) {
    this.expectedAuthorization = Buffer.from(
      `Basic ${Buffer.from(`${this.user}:${this.password}`).toString("base64")}`,
    );
    this.plainAgent = policy.httpAgent({ keepAlive: true });
    this.server = http.createServer((request, response) => this.forward(request, response));
    this.server.on("connect", (request: http.IncomingMessage, socket: net.Socket, head: Buffer) =>
      this.tunnel(request, socket, head),
    );
    this.server.on("clientError", (_error, socket) => socket.destroy());
  }

  /** A proxy listening on 127.0.0.1 on a free port; it does not keep the process alive. */
  static async open(
    policy: EgressPolicy,
    options: EgressProxyOptions,
    released: (port: number) => void,
  ): Promise<EgressProxy> {
    const proxy = new EgressProxy(policy, options, released);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once("error", reject);
      proxy.server.listen(0, proxy.host, () => {
        proxy.server.off("error", reject);
        resolve();
      });
    });
    proxy.server.unref();
    proxy.listeningPort = (proxy.server.address() as net.AddressInfo).port;
    return proxy;
  }

  get port(): number {
    return this.listeningPort;
  }

  /**
   * Why a connection through this proxy failed since the last call: the policy's refusal if there was
   * one, else the error of connecting to an allowed place. The client sees only an HTTP status, so its
   * owner reports this instead.
   */
  takeFailure(): Error | null {
    const failure = this.refusal ?? this.failure;
    this.refusal = null;
    this.failure = null;
    return failure;
  }

  /** Stops listening and ends every connection through the proxy. */
  async close(): Promise<void> {
    if (!this.server.listening) return;
    for (const socket of this.tunnels) socket.destroy();
    this.tunnels.clear();
    this.plainAgent.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.released(this.listeningPort);
  }

  private authorized(request: http.IncomingMessage): boolean {
    const given = Buffer.from(String(request.headers["proxy-authorization"] ?? ""));
    return given.length === this.expectedAuthorization.length && timingSafeEqual(given, this.expectedAuthorization);
  }

  /** Records why a connection failed and gives the status the client is answered with. */
  private failed(error: Error): { status: number; reason: string } {
    if (error instanceof EgressRefused) {
      this.refusal = error;
      return { status: PROXY_STATUS.refused, reason: error.message };
    }
    this.failure = error;
    return { status: PROXY_STATUS.failed, reason: error.message || "the connection failed" };
  }

  /** CONNECT host:port: a tunnel to a place the policy allows, for TLS the client speaks through it. */
  private tunnel(request: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    this.tunnels.add(client);
    client.on("close", () => this.tunnels.delete(client));
    client.on("error", () => client.destroy());
    const answer = (status: number, reason: string, extra = "") =>
      client.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${extra}Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(reason)}\r\nConnection: close\r\n\r\n${reason}`,
      );
    if (!this.authorized(request)) {
      answer(PROXY_STATUS.unauthorized, "", 'Proxy-Authenticate: Basic realm="egress"\r\n');
      return;
    }
    const target = parseAuthority(request.url ?? "");
    if (!target) {
      answer(PROXY_STATUS.malformed, "CONNECT needs host:port");
      return;
    }
    const upstream = this.policy.connect({ host: target.host, port: target.port });
    this.tunnels.add(upstream);
    upstream.on("close", () => this.tunnels.delete(upstream));
    client.on("close", () => upstream.destroy());
    upstream.once("connect", () => {
      upstream.off("error", refused);
      upstream.on("error", () => client.destroy());
      upstream.on("close", () => client.destroy());
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const refused = (error: Error) => {
      const { status, reason } = this.failed(error);
      answer(status, reason);
    };
    upstream.once("error", refused);
  }

  /** A plain-http request (origin or absolute form): forwarded to the plain target only. */
  private forward(request: http.IncomingMessage, response: http.ServerResponse): void {
    const answer = (status: number, reason: string) => {
      request.resume();
      response.writeHead(status, { "Content-Type": "text/plain", Connection: "close" }).end(reason);
    };
    const url = request.url ?? "";
    const absolute = /^http:\/\//i.test(url) && URL.canParse(url) ? new URL(url) : null;
    const target = parseAuthority(absolute ? absolute.host : String(request.headers.host ?? ""), 80);
    const allowed = this.options.plainTarget;
    if (
      !target ||
      !allowed ||
      target.port !== allowed.port ||
      target.host.toLowerCase() !== bareAddress(allowed.host).toLowerCase()
    ) {
      const named = target ? `${target.host}:${target.port}` : "a request without a host";
      const { status, reason } = this.failed(
        new EgressRefused(
          `refused by the egress policy: plain http goes only to the host the destination names, not ${named}`,
        ),
      );
      answer(status, reason);
      return;
    }
    const upstream = http.request(
      {
        host: target.host,
        port: target.port,
        method: request.method,
        path: absolute ? `${absolute.pathname}${absolute.search}` : request.url,
        headers: endToEndHeaders(request.headers),
        agent: this.plainAgent,
      },
      (upstreamResponse) => {
        response.writeHead(upstreamResponse.statusCode ?? 502, endToEndHeaders(upstreamResponse.headers));
        upstreamResponse.pipe(response);
      },
    );
    // A client that goes away takes its request to the target with it.
    response.on("close", () => {
      if (!response.writableFinished) upstream.destroy();
    });
    upstream.on("error", (error) => {
      if (response.headersSent || response.destroyed) response.destroy();
      else {
        const { status, reason } = this.failed(error);
        answer(status, reason);
      }
    });
    request.pipe(upstream);
  }
}
