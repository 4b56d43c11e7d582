import { describe, expect, it } from "vitest";
import { classifyCall } from "../../../server/dataplane/metering/counting-rule.ts";
import { refusal } from "../../../server/dataplane/proxy/jsonrpc.ts";
import { RATE_LIMITED_CODE } from "../../../server/dataplane/ratelimit/stage.ts";

const rateLimited = { kind: "RATE_LIMITED", http: 429, code: RATE_LIMITED_CODE, message: "Rate limited." };

describe("the counting rule: what a call counts as, and whether it is billed", () => {
  it.each([
    ["a call the node answered with a result", { upstreamStatus: 200 }, "SERVED", true, "requests"],
    [
      "a call the node answered with a revert (-32000)",
      { upstreamStatus: 200, nodeErrorCode: -32000 },
      "SERVED",
      true,
      "requests",
    ],
    ["a call with bad params (-32602): the node judged it", { nodeErrorCode: -32602 }, "SERVED", true, "requests"],
    ["a notification pushed and delivered", { pushed: true }, "SUBSCRIPTION_EVENT", true, "requests"],
    [
      "eth_fooBar: the node says method not found (-32601)",
      { upstreamStatus: 200, nodeErrorCode: -32601 },
      "UNKNOWN_METHOD",
      false,
      "unknownMethod",
    ],
    ["the node says the call is not JSON-RPC (-32600)", { nodeErrorCode: -32600 }, "MALFORMED", false, "malformed"],
    ["a body that is not JSON", { refusal: refusal("PARSE_ERROR") }, "MALFORMED", false, "malformed"],
    ["a call that is not a JSON-RPC object", { refusal: refusal("INVALID_REQUEST") }, "MALFORMED", false, "malformed"],
    ["a batch over the limit", { refusal: refusal("BATCH_TOO_LARGE") }, "MALFORMED", false, "malformed"],
    ["a missing token", { refusal: refusal("TOKEN_REQUIRED") }, "REFUSED", false, "refused"],
    ["an address not allowed", { refusal: refusal("IP_NOT_ALLOWED") }, "REFUSED", false, "refused"],
    ["a disabled method", { refusal: refusal("METHOD_DISABLED") }, "REFUSED", false, "refused"],
    [
      "a method no endpoint serves (the proxy's -32601)",
      { refusal: refusal("METHOD_NOT_AVAILABLE") },
      "REFUSED",
      false,
      "refused",
    ],
    ["a GET", { refusal: refusal("METHOD_NOT_ALLOWED") }, "REFUSED", false, "refused"],
    ["a rate limit", { refusal: rateLimited }, "REFUSED", false, "refused"],
    ["a node that did not answer", { refusal: refusal("UPSTREAM_FAILED") }, "REFUSED", false, "refused"],
    ["a node that answered HTTP 503", { upstreamStatus: 503 }, "UPSTREAM_ERROR", false, "refused"],
  ] as const)("%s", (_, outcome, count, billable, counter) => {
    expect(classifyCall(outcome)).toEqual({ count, billable, counter });
  });
});
