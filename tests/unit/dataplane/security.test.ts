import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  defaultSecurityOptions,
  type EndpointRecord,
  hashToken,
  type SecurityOptions,
} from "../../../server/dataplane/proxy/endpoint.ts";
import { call, type Harness, rpc, startHarness, wsCall } from "./harness.ts";

// Every security option, allowed and refused, over HTTP and WebSocket, against a real anvil.

let h: Harness;
let goodJwt: string;
let expiredJwt: string;
let wrongKidJwt: string;
let otherKeyJwt: string;
let publicKey: string;

const options = (on: Partial<SecurityOptions>): SecurityOptions => ({ ...defaultSecurityOptions(), ...on });

beforeAll(async () => {
  h = await startHarness();
  const { privateKey, publicKey: pub } = await generateKeyPair("ES256", { extractable: true });
  publicKey = await exportSPKI(pub);
  const other = await generateKeyPair("ES256");
  const sign = (key: CryptoKey, kid: string, exp: number) =>
    new SignJWT({ sub: "user" }).setProtectedHeader({ alg: "ES256", kid }).setExpirationTime(exp).sign(key);
  const now = Math.floor(Date.now() / 1000);
  goodJwt = await sign(privateKey, "key-1", now + 600);
  expiredJwt = await sign(privateKey, "key-1", now - 60);
  wrongKidJwt = await sign(privateKey, "key-2", now + 600);
  otherKeyJwt = await sign(other.privateKey, "key-1", now + 600);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

type Expect = "allowed" | { http: number; code: number };

interface Case {
  name: string;
  record: Omit<Partial<EndpointRecord>, "exId">;
  /** Path after the endpoint's /rpc/:exId (e.g. "/token"). */
  suffix?: string;
  headers?: () => Record<string, string>;
  method?: string;
  expect: Expect;
}

const TOKEN = "tok_0123456789abcdef0123456789abcdef";
const tokens = { options: options({ tokens: true }), tokenHashes: [hashToken(TOKEN)] };
const jwts = () => ({ options: options({ jwts: true }), jwts: [{ kid: "key-1", publicKey }] });
const referrers = {
  options: options({ referrers: true }),
  referrers: ["app.example.com", "*.trusted.org", "https://wallet.test:8443"],
};

const cases: Case[] = [
  { name: "no option on: anyone", record: {}, expect: "allowed" },
  { name: "tokens: token in the path", record: tokens, suffix: `/${TOKEN}`, expect: "allowed" },
  { name: "tokens: token in x-token", record: tokens, headers: () => ({ "x-token": TOKEN }), expect: "allowed" },
  { name: "tokens: no token", record: tokens, expect: { http: 401, code: -32001 } },
  { name: "tokens: wrong token", record: tokens, suffix: "/not-the-token", expect: { http: 401, code: -32001 } },
  {
    name: "tokens: option on, no tokens left",
    record: { options: options({ tokens: true }) },
    suffix: `/${TOKEN}`,
    expect: { http: 401, code: -32001 },
  },
  { name: "tokens: option off, token list ignored", record: { tokenHashes: [hashToken(TOKEN)] }, expect: "allowed" },
  { name: "jwts: valid", record: {}, headers: () => ({ authorization: `Bearer ${goodJwt}` }), expect: "allowed" },
  { name: "jwts: missing", record: {}, expect: { http: 401, code: -32002 } },
  {
    name: "jwts: expired",
    record: {},
    headers: () => ({ authorization: `Bearer ${expiredJwt}` }),
    expect: { http: 401, code: -32002 },
  },
  {
    name: "jwts: unknown kid",
    record: {},
    headers: () => ({ authorization: `Bearer ${wrongKidJwt}` }),
    expect: { http: 401, code: -32002 },
  },
  {
    name: "jwts: signed by another key",
    record: {},
    headers: () => ({ authorization: `Bearer ${otherKeyJwt}` }),
    expect: { http: 401, code: -32002 },
  },
  {
    name: "referrers: Origin matches",
    record: referrers,
    headers: () => ({ origin: "https://app.example.com" }),
    expect: "allowed",
  },
  {
    name: "referrers: Referer matches",
    record: referrers,
    headers: () => ({ referer: "http://app.example.com/page?x=1" }),
    expect: "allowed",
  },
  {
    name: "referrers: wildcard",
    record: referrers,
    headers: () => ({ origin: "https://a.b.trusted.org" }),
    expect: "allowed",
  },
  {
    name: "referrers: with port",
    record: referrers,
    headers: () => ({ origin: "https://wallet.test:8443" }),
    expect: "allowed",
  },
  {
    name: "referrers: other origin",
    record: referrers,
    headers: () => ({ origin: "https://evil.example.com" }),
    expect: { http: 403, code: -32004 },
  },
  {
    name: "referrers: wildcard is not the bare domain",
    record: referrers,
    headers: () => ({ origin: "https://trusted.org" }),
    expect: { http: 403, code: -32004 },
  },
  { name: "referrers: none sent", record: referrers, expect: { http: 403, code: -32004 } },
  { name: "ips: address", record: { options: options({ ips: true }), ips: ["127.0.0.1"] }, expect: "allowed" },
  {
    name: "ips: CIDR range",
    record: { options: options({ ips: true }), ips: ["10.0.0.0/8", "127.0.0.0/8"] },
    expect: "allowed",
  },
  {
    name: "ips: not listed",
    record: { options: options({ ips: true }), ips: ["10.0.0.0/8", "::1"] },
    expect: { http: 403, code: -32003 },
  },
  { name: "ips: option off", record: { ips: ["10.0.0.0/8"] }, expect: "allowed" },
  {
    name: "ipCustomHeader: client IP from the header",
    record: {
      options: options({ ips: true, ipCustomHeader: true }),
      ips: ["203.0.113.0/24"],
      ipCustomHeaderName: "cf-connecting-ip",
    },
    headers: () => ({ "cf-connecting-ip": "203.0.113.7" }),
    expect: "allowed",
  },
  {
    name: "ipCustomHeader: header names a refused IP",
    record: {
      options: options({ ips: true, ipCustomHeader: true }),
      ips: ["127.0.0.1"],
      ipCustomHeaderName: "cf-connecting-ip",
    },
    headers: () => ({ "cf-connecting-ip": "198.51.100.1" }),
    expect: { http: 403, code: -32003 },
  },
  {
    name: "ipCustomHeader: option off, header ignored",
    record: { options: options({ ips: true }), ips: ["203.0.113.0/24"], ipCustomHeaderName: "cf-connecting-ip" },
    headers: () => ({ "cf-connecting-ip": "203.0.113.7" }),
    expect: { http: 403, code: -32003 },
  },
  {
    name: "requestFilters: listed method",
    record: { options: options({ requestFilters: true }), requestFilterMethods: ["eth_chainId"] },
    expect: "allowed",
  },
  {
    name: "requestFilters: unlisted method",
    record: { options: options({ requestFilters: true }), requestFilterMethods: ["eth_getBalance"] },
    expect: { http: 200, code: -32005 },
  },
  { name: "requestFilters: option off", record: { requestFilterMethods: ["eth_getBalance"] }, expect: "allowed" },
  { name: "disabled method", record: { disabledMethods: ["eth_chainId"] }, expect: { http: 200, code: -32006 } },
  { name: "another method disabled", record: { disabledMethods: ["eth_getBalance"] }, expect: "allowed" },
];

// JWT cases share the key set; fill it once the key exists.
for (const c of cases) if (c.name.startsWith("jwts:")) Object.defineProperty(c, "record", { get: jwts });

let seq = 0;
describe.each(cases)("$name", (c) => {
  it("over HTTP", async () => {
    const exId = `http${++seq}`;
    h.put({ exId, ...c.record });
    const res = await rpc(h.port, `/rpc/${exId}${c.suffix ?? ""}`, call("eth_chainId"), c.headers?.());
    if (c.expect === "allowed") {
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ jsonrpc: "2.0", id: 1, result: "0xaa36a7" });
    } else {
      expect(res.status, res.text).toBe(c.expect.http);
      expect((res.body as { error: { code: number } }).error.code).toBe(c.expect.code);
    }
  });

  it("over WebSocket", async () => {
    const exId = `ws${++seq}`;
    h.put({ exId, ...c.record });
    const out = await wsCall(h.port, `/rpc/${exId}${c.suffix ?? ""}`, call("eth_chainId"), c.headers?.());
    if (c.expect === "allowed") {
      expect(out.opened).toBe(true);
      if (out.opened) {
        expect(out.answer).toEqual({ jsonrpc: "2.0", id: 1, result: "0xaa36a7" });
        out.ws.close();
      }
    } else if (c.expect.http === 200) {
      // A call-level refusal: the connection opens, the call gets an error.
      expect(out.opened).toBe(true);
      if (out.opened) {
        expect((out.answer as { error: { code: number } }).error.code).toBe(c.expect.code);
        out.ws.close();
      }
    } else {
      expect(out).toMatchObject({ opened: false, status: c.expect.http });
      if (!out.opened) expect(JSON.parse(out.body).error.code).toBe(c.expect.code);
    }
  });
});
