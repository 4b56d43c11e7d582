import { describe, expect, it } from "vitest";
import { isConsoleRoute } from "../../../server/platform/console-routes.ts";

describe("which unknown paths are console routes", () => {
  it("a route ending in a dotted key is the console's, as any deep link is", () => {
    expect(isConsoleRoute("GET", "/kv/values/threshold.eth")).toBe(true);
    expect(isConsoleRoute("GET", "/kv/lists/watch.list.v2?page=2")).toBe(true);
    expect(isConsoleRoute("HEAD", "/functions/3f2c/logs")).toBe(true);
    expect(isConsoleRoute("GET", "/")).toBe(true);
  });

  it("missing build files, unknown API paths and other methods are not", () => {
    expect(isConsoleRoute("GET", "/assets/index-abc123.js")).toBe(false);
    expect(isConsoleRoute("GET", "/assets/missing")).toBe(false);
    expect(isConsoleRoute("GET", "/favicon.ico")).toBe(false);
    expect(isConsoleRoute("GET", "/robots.txt?x=1")).toBe(false);
    expect(isConsoleRoute("GET", "/graphql/nope")).toBe(false);
    expect(isConsoleRoute("GET", "/rpc/unknown")).toBe(false);
    expect(isConsoleRoute("GET", "/kv-uploads/x")).toBe(false);
    expect(isConsoleRoute("POST", "/kv/values/a")).toBe(false);
  });
});
