import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { endpointLimits, type LimiterRow } from "../../../server/domains/ratelimits/limit-source.ts";
import {
  type Bucket,
  bucketDefault,
  bucketLimit,
  effectiveRate,
  limiterKey,
  overrideKey,
} from "../../../server/domains/ratelimits/rules.ts";

const rateLimiterSchema = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, "../../../schemas/entities/rate-limiter.schema.json"), "utf8"),
) as { $defs: { counter: { enum: string[]; "x-enumLabels": Record<string, string> } } };

const limit = (bucket: Bucket, rateLimit: number) => ({ kind: "LIMIT", bucket, rateLimit });
const key = (bucket: Bucket) => ({ kind: "KEY", bucket, rateLimit: null });

describe("rate-limit rules", () => {
  it.each([
    { name: "no rates", rates: [], rate: null },
    { name: "one enabled rate", rates: [{ rate: 5, status: "ENABLED" }], rate: 5 },
    { name: "a disabled rate limits nothing", rates: [{ rate: 5, status: "DISABLED" }], rate: null },
    {
      name: "the lowest enabled rate",
      rates: [
        { rate: 9, status: "ENABLED" },
        { rate: 3, status: "ENABLED" },
        { rate: 1, status: "DISABLED" },
      ],
      rate: 3,
    },
  ])("effectiveRate: $name", ({ rates, rate }) => {
    expect(effectiveRate(rates)).toBe(rate);
  });

  it.each([
    {
      name: "RPS without overrides: only the account's",
      bucket: "RPS",
      planRps: 25,
      overrides: [],
      enforced: { limit: null, perIp: false },
    },
    {
      name: "RPM without overrides: none",
      bucket: "RPM",
      planRps: 25,
      overrides: [],
      enforced: { limit: null, perIp: false },
    },
    {
      name: "a LIMIT override sets the endpoint's limit",
      bucket: "RPM",
      planRps: 25,
      overrides: [limit("RPM", 100)],
      enforced: { limit: 100, perIp: false },
    },
    {
      name: "another bucket's override does not apply",
      bucket: "RPD",
      planRps: 25,
      overrides: [limit("RPM", 100)],
      enforced: { limit: null, perIp: false },
    },
    {
      name: "KEY on RPS alone: each client IP gets the plan's RPS",
      bucket: "RPS",
      planRps: 25,
      overrides: [key("RPS")],
      enforced: { limit: 25, perIp: true },
    },
    {
      name: "KEY and LIMIT on RPS: each client IP gets the LIMIT",
      bucket: "RPS",
      planRps: 25,
      overrides: [key("RPS"), limit("RPS", 4)],
      enforced: { limit: 4, perIp: true },
    },
    {
      name: "KEY on RPM alone: per IP, but no limit to count",
      bucket: "RPM",
      planRps: 25,
      overrides: [key("RPM")],
      enforced: { limit: null, perIp: true },
    },
    {
      name: "KEY on RPS with no plan rate",
      bucket: "RPS",
      planRps: null,
      overrides: [key("RPS")],
      enforced: { limit: null, perIp: true },
    },
  ] as const)("bucketLimit: $name", ({ bucket, planRps, overrides, enforced }) => {
    expect(bucketLimit(bucket, planRps, [...overrides])).toEqual(enforced);
  });

  it.each([
    { bucket: "RPS", planRps: 25, shown: { key: "account", limit: 25 } },
    { bucket: "RPS", planRps: null, shown: { key: "account", limit: null } },
    { bucket: "RPM", planRps: 25, shown: { key: "endpoint", limit: null } },
    { bucket: "RPD", planRps: 25, shown: { key: "endpoint", limit: null } },
  ] as const)("bucketDefault: $bucket at plan RPS $planRps", ({ bucket, planRps, shown }) => {
    expect(bucketDefault(bucket, planRps)).toEqual(shown);
  });

  it.each([
    { what: "limiter by IP", key: limiterKey(true), expected: "endpoint+ip" },
    { what: "limiter per endpoint", key: limiterKey(false), expected: "endpoint" },
    { what: "KEY override", key: overrideKey("KEY"), expected: "endpoint+ip" },
    { what: "LIMIT override", key: overrideKey("LIMIT"), expected: "endpoint" },
  ])("the key a $what counts by", ({ key, expected }) => {
    expect(key).toBe(expected);
  });

  it("names every key in the entity schema's enum, where the console finds its label", () => {
    const counter = rateLimiterSchema.$defs.counter;
    const keys = [
      limiterKey(true),
      limiterKey(false),
      ...(["RPS", "RPM", "RPD"] as const).map((b) => bucketDefault(b, 1).key),
    ];
    expect(keys.filter((key) => !counter.enum.includes(key))).toEqual([]);
    expect(Object.keys(counter["x-enumLabels"]).sort()).toEqual([...counter.enum].sort());
  });
});

describe("rate-limit rules compiled for the proxy", () => {
  const limiterRow = (over: Partial<LimiterRow>): LimiterRow => ({
    id: "l1",
    accountId: "a",
    endpointId: "e",
    interval: "MINUTE",
    methods: ["eth_call"],
    limitByIp: false,
    rate: 10,
    status: "ENABLED",
    ...over,
  });
  const summary = (rules: ReturnType<typeof endpointLimits>) =>
    rules.map((r) => ({
      key: r.key,
      limit: r.limit,
      seconds: r.seconds,
      perIp: r.perIp,
      methods: r.methods && [...r.methods],
    }));

  it.each([
    {
      name: "nothing configured: no endpoint rules (the account's RPS applies apart)",
      limiters: [],
      overrides: [],
      rules: [],
    },
    {
      name: "a LIMIT override on RPD",
      limiters: [],
      overrides: [limit("RPD", 1000)],
      rules: [{ key: "e:e:RPD", limit: 1000, seconds: 86_400, perIp: false, methods: null }],
    },
    {
      name: "a KEY override on RPS: the plan's RPS per client IP",
      limiters: [],
      overrides: [key("RPS")],
      rules: [{ key: "e:e:RPS", limit: 25, seconds: 1, perIp: true, methods: null }],
    },
    {
      name: "a limiter's lowest enabled rate, on its methods and interval",
      limiters: [limiterRow({ rate: 10 }), limiterRow({ rate: 4 }), limiterRow({ rate: 1, status: "DISABLED" })],
      overrides: [],
      rules: [{ key: "l:l1", limit: 4, seconds: 60, perIp: false, methods: ["eth_call"] }],
    },
    {
      name: "a limiter on every method, per client IP",
      limiters: [limiterRow({ methods: ["*"], limitByIp: true, interval: "SECOND" })],
      overrides: [],
      rules: [{ key: "l:l1", limit: 10, seconds: 1, perIp: true, methods: null }],
    },
    {
      name: "a limiter with every rate disabled limits nothing",
      limiters: [limiterRow({ status: "DISABLED" })],
      overrides: [],
      rules: [],
    },
  ])("$name", ({ limiters, overrides, rules }) => {
    expect(summary(endpointLimits("e", 25, limiters, overrides))).toEqual(rules);
  });
});
