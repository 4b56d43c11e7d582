import { readFileSync } from "node:fs";
import { buildSchema } from "graphql";
import { describe, expect, it } from "vitest";
import { apiSdlPath } from "../../server/graphql/schema.ts";

describe("the API's SDL text", () => {
  // V8 keeps a text holding any character past U+00FF as two bytes per character, and so every name
  // parsed from it. Those names become the keys of every answer, which then serialises as a two-byte
  // string: measuring and encoding a 14 KB answer cost some 40 µs more per request. Descriptions write
  // such characters as GraphQL escapes (`\u2026`), which describe the same text.
  it("holds no character past U+00FF", () => {
    const lines = readFileSync(apiSdlPath, "utf8").split("\n");
    const wide = lines.flatMap((line, index) => (/[\u0100-\uffff]/.test(line) ? [`${index + 1}: ${line.trim()}`] : []));
    expect(wide).toEqual([]);
  });

  // GraphQL takes a type named `Subscription` for the subscription root when no `schema {}` names the
  // roots; the service serves no subscriptions, so no type may carry that name by accident.
  it("has no subscription root type", () => {
    expect(buildSchema(readFileSync(apiSdlPath, "utf8")).getSubscriptionType()).toBeUndefined();
  });
});
