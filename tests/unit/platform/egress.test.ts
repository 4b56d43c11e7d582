import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../server/platform/config.ts";
import { classifyAddress, EgressPolicy, EgressRefused, parseEgressAllow } from "../../../server/platform/egress.ts";
import { resolverOf } from "../../support/egress.ts";

/** What the policy's connect-time lookup gives for `host`: the allowed addresses, or its refusal. */
const lookupAll = (policy: EgressPolicy, host: string, port = 80) =>
  new Promise<unknown>((resolve, reject) =>
    policy.lookup(port)(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/** The host part of a URL as the WHATWG parser writes it (what webhook URLs go through). */
const urlHost = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, "");

describe("address classification", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["100.127.255.254", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["ff02::1", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["255.255.255.255", "reserved"],
    // IPv4-mapped, IPv4-compatible and NAT64 forms stand for the IPv4 address they carry.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["[::ffff:10.0.0.1]", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["::ffff:224.0.0.1", "multicast"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::10.0.0.1", "private"],
    // The local-use NAT64 prefix (RFC 8215) reaches whatever IPv4 addresses the operator's translator serves.
    ["64:ff9b:1::7f00:1", "private"],
    ["64:ff9b:1:7f00:1::", "private"],
    ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "private"],
    ["64:ff9b:2::808:808", "public"],
    // IPv4-translated (::ffff:0:a.b.c.d) and 6to4 (2002:aabb:ccdd::/48) too.
    ["::ffff:0:127.0.0.1", "loopback"],
    ["::ffff:0:a00:1", "private"],
    ["2002:7f00:1::", "loopback"],
    ["2002:7f00:0001:0:0:0:0:1", "loopback"],
    ["2002:a00:5::1", "private"],
    ["2002:a9fe:a9fe::", "link-local"],
    ["2002:808:808::1", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["8.8.8.8", "public"],
    ["1.1.1.1", "public"],
    ["172.32.0.1", "public"],
    ["100.128.0.1", "public"],
    ["2606:4700:4700::1111", "public"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    // WHATWG URL reads decimal, hex and short forms as IPv4 addresses; the policy sees what it made.
    ["http://2130706433/hook", "127.0.0.1", "loopback"],
    ["http://0x7f.1/hook", "127.0.0.1", "loopback"],
    ["http://0177.0.0.1/hook", "127.0.0.1", "loopback"],
    ["http://127.1/hook", "127.0.0.1", "loopback"],
    ["http://0/hook", "0.0.0.0", "unspecified"],
    ["http://[::ffff:127.0.0.1]/hook", "::ffff:7f00:1", "loopback"],
    ["http://0xa9fea9fe/", "169.254.169.254", "link-local"],
  ])("%s has host %s, %s", (url, host, kind) => {
    expect(urlHost(url)).toBe(host);
    expect(classifyAddress(urlHost(url))).toBe(kind);
  });

  it("refuses a host that is no IP address", () => {
    expect(() => classifyAddress("example.com")).toThrow("not an IP address");
  });
});

describe("the allow list setting", () => {
  it("reads hosts, addresses and ranges", () => {
    expect(parseEgressAllow("127.0.0.1/32, ::1,receiver.internal,10.0.0.0/8")).toEqual([
      { kind: "range", network: "127.0.0.1", prefix: 32, family: "ipv4" },
      { kind: "range", network: "::1", prefix: 128, family: "ipv6" },
      { kind: "host", name: "receiver.internal" },
      { kind: "range", network: "10.0.0.0", prefix: 8, family: "ipv4" },
    ]);
    expect(parseEgressAllow(undefined)).toEqual([]);
    expect(parseEgressAllow("")).toEqual([]);
  });

  it("is read with the other settings, and a wrong entry stops the start", () => {
    expect(loadConfig({}).egressAllow).toEqual([]);
    expect(loadConfig({ NODEPLANE_EGRESS_ALLOW: "receiver.internal" }).egressAllow).toEqual([
      { kind: "host", name: "receiver.internal" },
    ]);
    expect(() => loadConfig({ NODEPLANE_EGRESS_ALLOW: "10.0.0.0/99" })).toThrow("NODEPLANE_EGRESS_ALLOW");
  });

  it.each(["10.0.0.0/33", "::1/129", "10.0.0.0/8/1", "http://x", "a b", "10.0.0.0/x"])("refuses %s", (entry) => {
    expect(() => parseEgressAllow(entry)).toThrow(`NODEPLANE_EGRESS_ALLOW: "${entry}" is not`);
  });
});

describe("the policy", () => {
  const strict = new EgressPolicy();

  it("says why an address is refused and how to allow it", () => {
    expect(strict.refusal("127.0.0.1", 80)).toBe(
      "refused by the egress policy: 127.0.0.1 is a loopback address; an operator can allow it with NODEPLANE_EGRESS_ALLOW",
    );
    expect(strict.refusal("0.0.0.0", 80)).toContain("0.0.0.0 is an unspecified address");
    expect(strict.refusal("::ffff:10.0.0.1", 80)).toContain(
      "::ffff:10.0.0.1 is a private address (the IPv4 address 10.0.0.1 in an IPv6 form)",
    );
    expect(strict.refusal("93.184.215.14", 443)).toBeNull();
  });

  it("allows ranges and names the operator lists, IPv4 ranges also in IPv6 forms", () => {
    const policy = new EgressPolicy({ allow: parseEgressAllow("127.0.0.1/32,10.0.0.0/8,receiver.internal") });
    expect(policy.refusal("127.0.0.1", 80)).toBeNull();
    expect(policy.refusal("::ffff:127.0.0.1", 80)).toBeNull();
    expect(policy.refusal("10.9.9.9", 80)).toBeNull();
    expect(policy.refusal("127.0.0.2", 80)).toContain("loopback");
    expect(policy.refusal("::1", 80)).toContain("loopback");
    expect(policy.refusal("192.168.0.9", 80, "receiver.internal")).toBeNull();
    expect(policy.refusal("192.168.0.9", 80, "other.internal")).toBe(
      "refused by the egress policy: other.internal resolves to 192.168.0.9, a private address; an operator can allow it with NODEPLANE_EGRESS_ALLOW",
    );
  });

  it("refuses this service's own ports on this machine's addresses even when the range is allowed", () => {
    const policy = new EgressPolicy({ allow: parseEgressAllow("127.0.0.1/32"), ownPorts: [5432] });
    policy.addOwnPort(8080);
    expect(policy.refusal("127.0.0.1", 5432)).toBe(
      "refused by the egress policy: 127.0.0.1 port 5432 is this service's own port",
    );
    expect(policy.refusal("127.0.0.1", 8080)).toContain("own port");
    expect(policy.refusal("127.0.0.1", 8081)).toBeNull();
    expect(policy.refusal("8.8.8.8", 8080)).toBeNull();
    // An address refused anyway is refused without naming the port: no port of ours stands out.
    expect(policy.refusal("0.0.0.0", 8080)).toBe(policy.refusal("0.0.0.0", 8081));
    const closed = new EgressPolicy({ ownPorts: [5432] });
    expect(closed.refusal("127.0.0.1", 5432)).toBe(closed.refusal("127.0.0.1", 5433));
    expect(closed.refusal("127.0.0.1", 5432)).toContain("a loopback address");
  });

  it("refuses this machine's own public addresses unless allowed", () => {
    const machine = new EgressPolicy({ machineAddresses: ["203.0.114.7", "2001:4860::7"] });
    expect(machine.refusal("203.0.114.7", 22)).toBe(
      "refused by the egress policy: 203.0.114.7 is an address of this machine; an operator can allow it with NODEPLANE_EGRESS_ALLOW",
    );
    expect(machine.refusal("::ffff:203.0.114.7", 22)).toContain("an address of this machine");
    expect(machine.refusal("2001:4860::7", 22)).toContain("an address of this machine");
    expect(machine.refusal("203.0.114.8", 22)).toBeNull();
    const allowed = new EgressPolicy({ machineAddresses: ["203.0.114.7"], allow: parseEgressAllow("203.0.114.7") });
    expect(allowed.refusal("203.0.114.7", 22)).toBeNull();
  });

  it("refuses localhost by name, and names resolving to refused addresses", async () => {
    expect(() => strict.checkHost("localhost", 80)).toThrow("localhost is a loopback address");
    expect(() => strict.checkHost("api.localhost", 80)).toThrow(EgressRefused);
    expect(() => strict.checkHost("[::1]", 80)).toThrow("::1 is a loopback address");
    expect(() => strict.checkHost("example.com", 80)).not.toThrow();

    const policy = new EgressPolicy({
      resolve: resolverOf({
        "inside.example": ["127.0.0.1"],
        "metadata.example": ["::ffff:169.254.169.254"],
        "outside.example": ["93.184.215.14"],
      }),
    });
    await expect(lookupAll(policy, "inside.example")).rejects.toThrow(
      "refused by the egress policy: inside.example resolves to 127.0.0.1, a loopback address",
    );
    await expect(lookupAll(policy, "metadata.example")).rejects.toThrow("link-local address");
    await expect(lookupAll(policy, "outside.example")).resolves.toEqual([{ address: "93.184.215.14", family: 4 }]);
    await expect(lookupAll(policy, "2130706433")).rejects.toThrow(/ENOTFOUND|refused/);
  });

  it("the system resolver's reading of a numeric host name is checked too", async () => {
    // getaddrinfo reads "2130706433" as 127.0.0.1 (inet_aton); what it returns is what is checked.
    await expect(lookupAll(strict, "2130706433")).rejects.toThrow("2130706433 resolves to 127.0.0.1, a loopback");
  });

  it("lookup keeps only allowed addresses, so a connection goes to a checked one", async () => {
    const policy = new EgressPolicy({
      resolve: resolverOf({ "mixed.example": ["10.0.0.5", "93.184.215.14"], "inside.example": ["127.0.0.1"] }),
    });
    await expect(lookupAll(policy, "mixed.example")).resolves.toEqual([{ address: "93.184.215.14", family: 4 }]);
    await expect(lookupAll(policy, "inside.example")).rejects.toThrow(EgressRefused);
  });

  describe("connections", () => {
    let server: http.Server;
    let port: number;
    beforeAll(async () => {
      server = http.createServer((_req, res) => res.end("ok"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as net.AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const connectError = (socket: net.Socket) =>
      new Promise<Error | null>((resolve) => {
        socket.once("connect", () => {
          socket.destroy();
          resolve(null);
        });
        socket.once("error", resolve);
      });

    it("refuses an address before connecting, and a name that resolves to it (DNS rebinding)", async () => {
      let accepted = 0;
      server.on("connection", () => accepted++);
      const rebinding = new EgressPolicy({ resolve: resolverOf({ "rebind.example": ["127.0.0.1"] }) });
      const byAddress = await connectError(rebinding.connect({ host: "127.0.0.1", port }));
      const byName = await connectError(rebinding.connect({ host: "rebind.example", port }));
      expect(byAddress).toBeInstanceOf(EgressRefused);
      expect(byName?.message).toContain("rebind.example resolves to 127.0.0.1, a loopback address");
      expect(accepted).toBe(0);
    });

    it("connects where the operator allows", async () => {
      const allowed = new EgressPolicy({
        allow: parseEgressAllow("receiver.internal"),
        resolve: resolverOf({ "receiver.internal": ["127.0.0.1"] }),
      });
      expect(await connectError(allowed.connect({ host: "receiver.internal", port }))).toBeNull();
      expect(
        await connectError(
          new EgressPolicy({ allow: parseEgressAllow("127.0.0.1") }).connect({ host: "127.0.0.1", port }),
        ),
      ).toBeNull();
    });

    it("agents refuse what the policy refuses and pass what it allows", async () => {
      const get = (agent: http.Agent, host: string) =>
        new Promise<string>((resolve, reject) => {
          const request = http.get({ host, port, agent, path: "/" }, (res) => {
            res.resume();
            res.on("end", () => resolve(`HTTP ${res.statusCode}`));
          });
          request.on("error", reject);
        });
      await expect(get(strict.httpAgent(), "127.0.0.1")).rejects.toThrow("127.0.0.1 is a loopback address");
      await expect(get(strict.httpAgent(), "localhost")).rejects.toThrow("loopback");
      const allowed = new EgressPolicy({ allow: parseEgressAllow("127.0.0.1/8") });
      await expect(get(allowed.httpAgent(), "127.0.0.1")).resolves.toBe("HTTP 200");
    });

    it("a socket for drivers refuses refused addresses and local socket paths", async () => {
      expect(await connectError(strict.socket().connect(port, "127.0.0.1"))).toBeInstanceOf(EgressRefused);
      expect((await connectError(strict.socket().connect("/tmp/.s.PGSQL.5432")))?.message).toContain(
        "a local socket path",
      );
      const allowed = new EgressPolicy({ allow: parseEgressAllow("127.0.0.1") });
      expect(await connectError(allowed.socket().connect(port, "127.0.0.1"))).toBeNull();
      // A port given as text is a port, not a socket path.
      const asText = allowed.socket() as unknown as { connect(port: string, host: string): net.Socket };
      expect(await connectError(asText.connect(String(port), "127.0.0.1"))).toBeNull();
    });
  });
});

describe("the egress proxy (for clients that take only proxy settings)", () => {
  let echo: net.Server;
  let echoPort: number;
  let echoed = 0;
  let web: http.Server;
  let webPort: number;
  const webSeen: http.IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    echo = net.createServer((socket) => {
      echoed++;
      socket.pipe(socket);
    });
    web = http.createServer((req, res) => {
      webSeen.push(req.headers);
      res.end(`plain ${req.method} ${req.url}`);
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
    echoPort = (echo.address() as net.AddressInfo).port;
    webPort = (web.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => echo.close(() => resolve()));
    await new Promise<void>((resolve) => web.close(() => resolve()));
  });

  const policy = () =>
    new EgressPolicy({
      allow: parseEgressAllow("receiver.internal"),
      resolve: resolverOf({
        "receiver.internal": ["127.0.0.1"],
        "inside.example": ["10.0.0.5"],
        // Public when first asked, loopback when the proxy connects.
        "rebind.example": (asked) => (asked === 1 ? ["93.184.215.14"] : ["127.0.0.1"]),
      }),
    });

  /** Sends CONNECT; answers the proxy's status line and body, and the socket when the tunnel is up. */
  function connectThrough(port: number, target: string, authorization?: string) {
    return new Promise<{ head: string; socket: net.Socket }>((resolve, reject) => {
      const socket = net.connect({ host: "127.0.0.1", port });
      let received = "";
      socket.on("error", reject);
      socket.on("data", function onData(chunk) {
        received += chunk.toString("latin1");
        const end = received.indexOf("\r\n\r\n");
        if (end < 0) return;
        if (received.startsWith("HTTP/1.1 200")) {
          socket.off("data", onData);
          resolve({ head: received.slice(0, end), socket });
        }
      });
      socket.on("end", () => resolve({ head: received, socket }));
      const auth = authorization ? `Proxy-Authorization: ${authorization}\r\n` : "";
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
    });
  }
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

  it("listens on 127.0.0.1 and tunnels to an allowed place only with its own credential", async () => {
    const egress = policy();
    const proxy = await egress.openProxy();
    const other = await egress.openProxy();
    try {
      expect(proxy.host).toBe("127.0.0.1");
      expect(proxy.password).not.toBe(other.password);
      const target = `receiver.internal:${echoPort}`;
      for (const authorization of [undefined, basic(proxy.user, "wrong"), basic(other.user, other.password)]) {
        const { head, socket } = await connectThrough(proxy.port, target, authorization);
        expect(head).toMatch(/^HTTP\/1\.1 407 /);
        socket.destroy();
      }
      expect(echoed).toBe(0);
      const { head, socket } = await connectThrough(proxy.port, target, basic(proxy.user, proxy.password));
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
      const reply = new Promise<string>((resolve) => socket.once("data", (d) => resolve(d.toString())));
      socket.write("ping");
      expect(await reply).toBe("ping");
      socket.destroy();
      expect(echoed).toBe(1);
      expect(proxy.takeFailure()).toBeNull();
    } finally {
      await proxy.close();
      await other.close();
    }
  });

  it("refuses on the address connected to, with the reason, and says why afterwards", async () => {
    const egress = policy();
    const proxy = await egress.openProxy();
    try {
      const credential = basic(proxy.user, proxy.password);
      // The name looks public to whoever checks it first; the proxy's own lookup gets loopback.
      await expect(lookupAll(egress, "rebind.example", echoPort)).resolves.toEqual([
        { address: "93.184.215.14", family: 4 },
      ]);
      for (const [target, reason] of [
        [`rebind.example:${echoPort}`, "rebind.example resolves to 127.0.0.1, a loopback address"],
        [`inside.example:${echoPort}`, "inside.example resolves to 10.0.0.5, a private address"],
        [`127.0.0.1:${echoPort}`, "127.0.0.1 is a loopback address"],
        [`[::ffff:127.0.0.1]:${echoPort}`, "::ffff:127.0.0.1 is a loopback address (the IPv4 address 127.0.0.1"],
      ]) {
        const { head, socket } = await connectThrough(proxy.port, target, credential);
        socket.destroy();
        expect(head).toMatch(/^HTTP\/1\.1 421 /);
        expect(head).toContain(`refused by the egress policy: ${reason}`);
        const failure = proxy.takeFailure();
        expect(failure).toBeInstanceOf(EgressRefused);
        expect(failure?.message).toContain(reason);
      }
      expect(echoed).toBe(1);
      const closed = await new Promise<number>((resolve) => {
        const probe = net.createServer().listen(0, "127.0.0.1", () => {
          const { port } = probe.address() as net.AddressInfo;
          probe.close(() => resolve(port));
        });
      });
      const { head, socket } = await connectThrough(proxy.port, `receiver.internal:${closed}`, credential);
      socket.destroy();
      expect(head).toMatch(/^HTTP\/1\.1 502 /);
      expect(proxy.takeFailure()?.message).toContain("ECONNREFUSED");
    } finally {
      await proxy.close();
    }
  });

  it("forwards plain http only to the place it was opened for, without the proxy headers", async () => {
    const egress = policy();
    const proxy = await egress.openProxy({ plainTarget: { host: "receiver.internal", port: webPort } });
    const get = (host: string, path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = http.get(
          { host: proxy.host, port: proxy.port, path, headers: { Host: host, "Proxy-Authorization": "Basic x" } },
          (res) => {
            let body = "";
            res.on("data", (d) => (body += d));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        request.on("error", reject);
      });
    try {
      expect(await get(`receiver.internal:${webPort}`, "/session?x=1")).toEqual({
        status: 200,
        body: "plain GET /session?x=1",
      });
      expect(webSeen.at(-1)?.host).toBe(`receiver.internal:${webPort}`);
      expect(webSeen.at(-1)?.["proxy-authorization"]).toBeUndefined();
      expect(await get(`http://receiver.internal:${webPort}/abs`, `http://receiver.internal:${webPort}/abs`)).toEqual({
        status: 200,
        body: "plain GET /abs",
      });
      const other = await get(`127.0.0.1:${echoPort}`, "/");
      expect(other.status).toBe(421);
      expect(other.body).toBe(
        `refused by the egress policy: plain http goes only to the host the destination names, not 127.0.0.1:${echoPort}`,
      );
      expect(proxy.takeFailure()).toBeInstanceOf(EgressRefused);
      expect(webSeen).toHaveLength(2);
    } finally {
      await proxy.close();
    }
    const withoutTarget = await egress.openProxy();
    try {
      const refused = await new Promise<number>((resolve, reject) =>
        http
          .get({ host: withoutTarget.host, port: withoutTarget.port, path: "/" }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on("error", reject),
      );
      expect(refused).toBe(421);
    } finally {
      await withoutTarget.close();
    }
    expect(webSeen).toHaveLength(2);
  });

  it("counts as this service's own port while open, so no tenant-named connection reaches it", async () => {
    const egress = new EgressPolicy({ allow: parseEgressAllow("127.0.0.1/32") });
    const proxy = await egress.openProxy();
    const port = proxy.port;
    expect(egress.refusal("127.0.0.1", port)).toBe(
      `refused by the egress policy: 127.0.0.1 port ${port} is this service's own port`,
    );
    await proxy.close();
    expect(egress.refusal("127.0.0.1", port)).toBeNull();
    await expect(
      new Promise((resolve, reject) =>
        net.connect({ host: "127.0.0.1", port }).on("connect", resolve).on("error", reject),
      ),
    ).rejects.toThrow("ECONNREFUSED");
  });
});
