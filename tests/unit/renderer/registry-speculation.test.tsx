// @vitest-environment jsdom
// A registry query started with the viewer's (speculateRegistry) is the one the signed-in console takes;
// one that failed because no one was signed in then is asked again once someone is.
import { type Cache, preload } from "swr";
import { cache, SWRGlobalState, serialize } from "swr/_internal";
import { afterEach, describe, expect, it } from "vitest";
import { GqlError, preloadRegistry, speculateRegistry, type Transport } from "../../../renderer/core.ts";
import type { Registry, Viewer } from "../../../renderer/types.ts";
import { registryFor, viewerFor } from "./harness.tsx";

const registry: Registry = registryFor("owner");
const viewer: Viewer = viewerFor("OWNER");
const emptyCache = new Map() as unknown as Cache;

/** A transport answering the registry query: each answer from `answers` in turn, counting the asks. */
function registryTransport(answers: (() => Promise<Record<string, unknown>>)[]): Transport & { asked: () => number } {
  let asked = 0;
  const transport = (async (document: string) => {
    if (!document.includes("registry")) throw new Error(`unexpected operation: ${document}`);
    const answer = answers[asked];
    asked += 1;
    return answer();
  }) as Transport & { asked: () => number };
  transport.asked = () => asked;
  return transport;
}

/** What preloadRegistry handed the signed-in console (swr's preload answers the one it holds). */
const preloaded = () =>
  preload(["registry"], () => Promise.reject(new Error("nothing was preloaded"))) as Promise<Registry>;

// What a view would take: swr keeps a preloaded answer until then, and the next test would get it.
afterEach(() => {
  const [key] = serialize(["registry"]);
  delete (SWRGlobalState.get(cache) as unknown as Record<string, unknown>[])[3][key];
});

describe("the registry asked with the viewer", () => {
  it("is taken when someone is signed in: one registry query in all", async () => {
    const transport = registryTransport([async () => ({ registry })]);
    speculateRegistry(transport);
    preloadRegistry(transport, emptyCache, viewer);
    await expect(preloaded()).resolves.toBe(registry);
    expect(transport.asked()).toBe(1);
  });

  it("one that failed (no one was signed in when asked) is asked again once someone is", async () => {
    const transport = registryTransport([
      async () => {
        throw new GqlError("Sign in first.", "UNAUTHENTICATED");
      },
      async () => ({ registry }),
    ]);
    speculateRegistry(transport);
    preloadRegistry(transport, emptyCache, viewer);
    await expect(preloaded()).resolves.toBe(registry);
    expect(transport.asked()).toBe(2);
  });
});
