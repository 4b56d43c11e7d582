import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDestination, type SnowflakeAttributes } from "../../../server/dataplane/destinations/index.ts";
import { EgressPolicy, parseEgressAllow } from "../../../server/platform/egress.ts";
import { resolverOf } from "../../support/egress.ts";
import { freePort } from "../../support/ports.ts";

/**
 * The Snowflake driver takes no socket or lookup, only proxy settings: these tests prove that what it
 * connects to is checked on the address connected to (names that resolve to refused addresses, and a
 * name that rebinds between two connections), that an allowed place is reached through the proxy,
 * over plain http and over TLS, and that the driver's other connections (queries, result chunks from
 * cloud storage, logout) take the same way.
 */
const ctx = { streamId: "s-1", network: "local", dataset: "BLOCK" };
const batch = { startBlock: 1, endBlock: 1, payloadJson: "[]" };
const password = "snowflake-Secret-Password-42";
const attrs = (host: string, port: number, protocol: "http" | "https"): SnowflakeAttributes => ({
  type: "SNOWFLAKE",
  username: "loader",
  password,
  account: "xy12345",
  warehouse: "WH",
  database: "DB",
  schema: "PUBLIC",
  tableName: "T",
  host,
  port,
  protocol,
});
const CANNOT = "Snowflake: cannot connect to account xy12345: ";

/** Answers the driver's login as Snowflake answers a wrong password. */
function wrongPassword(req: http.IncomingMessage, res: http.ServerResponse) {
  req.resume();
  req.on("end", () =>
    res.writeHead(200, { "Content-Type": "application/json" }).end(
      JSON.stringify({
        success: false,
        code: "390100",
        message: "Incorrect username or password was specified.",
        data: null,
      }),
    ),
  );
}

/** A plain-http receiver. */
let web: http.Server;
let webPort: number;
const webRequests: { method?: string; url?: string; host?: string }[] = [];
/** A TLS receiver (the test certificate, which the driver does not trust) that notes what each client asked for. */
let secure: tls.Server;
let securePort: number;
const secureServerNames: string[] = [];
let accepted = 0;

/**
 * Every socket this process opens from before the driver loads, and the ports of the egress proxies
 * opened: at the end, each socket must have gone to a proxy or through the policy's lookup.
 */
const sockets: { host: string; port: number; checked: boolean }[] = [];
const proxyPorts = new Set<number>();
const socketConnect = net.Socket.prototype.connect;
const openProxy = EgressPolicy.prototype.openProxy;
beforeAll(() => {
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    // net.connect passes its normalized arguments as one array: [options, callback].
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    if (first && typeof first === "object" && "port" in first) {
      const options = first as net.TcpNetConnectOpts;
      sockets.push({ host: options.host ?? "localhost", port: Number(options.port), checked: !!options.lookup });
    }
    return (socketConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof socketConnect;
  EgressPolicy.prototype.openProxy = async function (this: EgressPolicy, ...args) {
    const proxy = await openProxy.apply(this, args);
    proxyPorts.add(proxy.port);
    return proxy;
  };
});
afterAll(() => {
  net.Socket.prototype.connect = socketConnect;
  EgressPolicy.prototype.openProxy = openProxy;
});

beforeAll(async () => {
  web = http.createServer((req, res) => {
    webRequests.push({ method: req.method, url: req.url, host: req.headers.host });
    wrongPassword(req, res);
  });
  web.on("connection", () => accepted++);
  const dir = path.join(import.meta.dirname, "../../support/tls");
  secure = tls.createServer({
    key: readFileSync(path.join(dir, "localhost.key")),
    cert: readFileSync(path.join(dir, "localhost.crt")),
    // Read from the ClientHello, before the client judges the certificate: what it asked for arrived.
    SNICallback: (servername, callback) => {
      secureServerNames.push(servername);
      callback(null, undefined);
    },
  });
  secure.on("connection", () => accepted++);
  secure.on("tlsClientError", () => {});
  secure.on("secureConnection", (socket) => socket.destroy());
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => secure.listen(0, "127.0.0.1", resolve));
  webPort = (web.address() as net.AddressInfo).port;
  securePort = (secure.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => web.close(() => resolve()));
  await new Promise<void>((resolve) => secure.close(() => resolve()));
});

const answers = {
  "inside.example": ["127.0.0.1"],
  "mixed.example": ["10.0.0.5", "127.0.0.1"],
  "receiver.internal": ["127.0.0.1"],
  // An allowed address when first asked, loopback afterwards (the allowed one stands in for a public one).
  "rebind.example": (asked: number) => (asked === 1 ? ["127.0.0.2"] : ["127.0.0.1"]),
};

async function testAndDeliver(egress: EgressPolicy, target: SnowflakeAttributes) {
  const destination = createDestination(target, ctx, { egress });
  try {
    const result = await destination.test();
    const failure = (await destination.deliver(batch).then(
      () => null,
      (e: unknown) => e,
    )) as { message: string; retryable: boolean } | null;
    return { result, failure };
  } finally {
    await destination.close();
  }
}

describe.each(["https", "http"] as const)("a Snowflake destination over %s under the egress policy", (protocol) => {
  it("is refused when its host name resolves to a loopback or private address, and nothing is reached", async () => {
    const egress = new EgressPolicy({ resolve: resolverOf(answers) });
    const before = accepted;
    for (const [host, reason] of [
      ["inside.example", "inside.example resolves to 127.0.0.1, a loopback address"],
      ["mixed.example", "mixed.example resolves to 10.0.0.5, a private address"],
    ]) {
      const { result, failure } = await testAndDeliver(
        egress,
        attrs(host, protocol === "http" ? webPort : securePort, protocol),
      );
      expect(result.ok).toBe(false);
      expect(result.message).toBe(
        `${CANNOT}refused by the egress policy: ${reason}; an operator can allow it with NODEPLANE_EGRESS_ALLOW`,
      );
      expect(failure?.message).toBe(result.message);
      // The allow list has to change first: retrying will not help.
      expect(failure?.retryable).toBe(false);
    }
    expect(accepted).toBe(before);
    expect(webRequests).toHaveLength(0);
  });

  it("gives the same answer for an open and a closed port of a refused address", async () => {
    const egress = new EgressPolicy({ resolve: resolverOf(answers) });
    const messages = [];
    for (const port of [protocol === "http" ? webPort : securePort, await freePort()]) {
      const { result } = await testAndDeliver(egress, attrs("inside.example", port, protocol));
      messages.push(result.message);
    }
    expect(messages[0]).toBe(messages[1]);
  });
});

describe("a Snowflake destination the operator allows", () => {
  const egress = new EgressPolicy({ allow: parseEgressAllow("receiver.internal"), resolve: resolverOf(answers) });

  it("over plain http reaches the receiver through the proxy, and the receiver's answer comes back", async () => {
    const { result, failure } = await testAndDeliver(egress, attrs("receiver.internal", webPort, "http"));
    expect(result.ok).toBe(false);
    expect(result.message).toBe(`${CANNOT}Incorrect username or password was specified.`);
    expect(failure?.message).toBe(result.message);
    const logins = webRequests.splice(0);
    expect(logins.length).toBeGreaterThanOrEqual(2);
    for (const login of logins) {
      expect(login.method).toBe("POST");
      expect(login.url).toMatch(/^\/session\/v1\/login-request\?/);
      expect(login.host).toBe(`receiver.internal:${webPort}`);
    }
  });

  it("over https tunnels the driver's TLS to the receiver, which still has to prove its certificate", async () => {
    const { result } = await testAndDeliver(egress, attrs("receiver.internal", securePort, "https"));
    expect(secureServerNames.length).toBeGreaterThanOrEqual(1);
    expect(new Set(secureServerNames.splice(0))).toEqual(new Set(["receiver.internal"]));
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(new RegExp(`^${CANNOT}.*(self-signed|certificate)`));
    expect(result.message).not.toContain("refused by the egress policy");
  });
});

describe("a Snowflake destination whose host name rebinds", () => {
  it("is checked on each connection's own lookup: the first reaches the allowed address, the next is refused", async () => {
    // The same port on 127.0.0.2 (allowed) and 127.0.0.1 (refused): only the lookup decides which is reached.
    const reached: string[] = [];
    const receiver = (address: string) =>
      http.createServer((req, res) => {
        reached.push(address);
        wrongPassword(req, res);
      });
    const allowedReceiver = receiver("127.0.0.2");
    await new Promise<void>((resolve) => allowedReceiver.listen(0, "127.0.0.2", resolve));
    const port = (allowedReceiver.address() as net.AddressInfo).port;
    const refusedReceiver = receiver("127.0.0.1");
    await new Promise<void>((resolve) => refusedReceiver.listen(port, "127.0.0.1", resolve));
    const egress = new EgressPolicy({ allow: parseEgressAllow("127.0.0.2/32"), resolve: resolverOf(answers) });
    try {
      const { result, failure } = await testAndDeliver(egress, attrs("rebind.example", port, "http"));
      expect(result.message).toBe(`${CANNOT}Incorrect username or password was specified.`);
      expect(failure?.message).toBe(
        `${CANNOT}refused by the egress policy: rebind.example resolves to 127.0.0.1, a loopback address; an operator can allow it with NODEPLANE_EGRESS_ALLOW`,
      );
      expect(failure?.retryable).toBe(false);
      expect(reached).toEqual(["127.0.0.2"]);
    } finally {
      await new Promise<void>((resolve) => allowedReceiver.close(() => resolve()));
      await new Promise<void>((resolve) => refusedReceiver.close(() => resolve()));
    }
  });
});

describe("a Snowflake destination that logs in through the proxy", () => {
  /**
   * Enough of Snowflake's REST API for the driver: a login that succeeds, telemetry, and queries whose
   * answer has one row inline and, when `chunkUrl` is set, a further result chunk to fetch from there.
   */
  let chunkUrl: string | undefined;
  const paths: string[] = [];
  let fake: http.Server;
  let fakePort: number;
  const ok = (data: unknown) => JSON.stringify({ success: true, code: null, message: null, data });
  beforeAll(async () => {
    fake = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const path = (req.url ?? "").split("?")[0];
        paths.push(path);
        res.writeHead(200, { "Content-Type": "application/json" });
        if (path === "/session/v1/login-request") {
          res.end(
            ok({
              token: "session-token",
              masterToken: "master-token",
              validityInSeconds: 3600,
              masterValidityInSeconds: 14400,
              sessionId: 1,
              sessionInfo: { databaseName: "DB", schemaName: "PUBLIC", warehouseName: "WH", roleName: "LOADER" },
              parameters: [],
            }),
          );
        } else if (path === "/queries/v1/query-request") {
          res.end(
            ok({
              parameters: [],
              rowtype: [{ name: "ROLE", type: "text", nullable: true, length: 16, byteLength: 16 }],
              rowset: [["LOADER"]],
              total: chunkUrl ? 2 : 1,
              returned: chunkUrl ? 2 : 1,
              queryId: "query-1",
              statementTypeId: 4096,
              version: 1,
              queryResultFormat: "json",
              ...(chunkUrl
                ? { chunks: [{ url: chunkUrl, rowCount: 1, uncompressedSize: 12, compressedSize: 12 }] }
                : {}),
            }),
          );
        } else res.end(ok({}));
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    fakePort = (fake.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => fake.close(() => resolve())));

  const egress = new EgressPolicy({ allow: parseEgressAllow("receiver.internal"), resolve: resolverOf(answers) });

  it("is reachable: the test logs in and queries, a delivery creates the table and inserts, close logs out", async () => {
    chunkUrl = undefined;
    paths.length = 0;
    const { result, failure } = await testAndDeliver(egress, attrs("receiver.internal", fakePort, "http"));
    expect(result).toMatchObject({ ok: true, message: "connected to Snowflake account xy12345" });
    expect(failure).toBeNull();
    expect(paths.filter((p) => p !== "/telemetry/send")).toEqual([
      "/session/v1/login-request",
      "/queries/v1/query-request",
      "/queries/v1/query-request",
      "/queries/v1/query-request",
      // The logout when the destination closes.
      "/session",
    ]);
  });

  it("fetches result chunks from cloud storage through the proxy: a refused one fails the query with the reason", async () => {
    chunkUrl = "https://inside.example/results/chunk-0";
    try {
      const { result, failure } = await testAndDeliver(egress, attrs("receiver.internal", fakePort, "http"));
      expect(result.ok).toBe(false);
      expect(result.message).toBe(
        "Snowflake: refused by the egress policy: inside.example resolves to 127.0.0.1, a loopback address; an operator can allow it with NODEPLANE_EGRESS_ALLOW",
      );
      expect(failure?.message).toBe(result.message);
      expect(failure?.retryable).toBe(false);
    } finally {
      chunkUrl = undefined;
    }
  });
});

describe("everything the driver connects to", () => {
  it("went to its egress proxy or through the policy's lookup: nothing else, no cloud metadata probe", () => {
    expect(proxyPorts.size).toBeGreaterThan(0);
    const toProxies = sockets.filter((s) => s.host === "127.0.0.1" && proxyPorts.has(s.port));
    const checked = sockets.filter((s) => s.checked);
    expect(toProxies.length).toBeGreaterThan(0);
    expect(checked.map((s) => s.host)).toContain("receiver.internal");
    expect(sockets.filter((s) => !toProxies.includes(s) && !checked.includes(s))).toEqual([]);
  });
});
