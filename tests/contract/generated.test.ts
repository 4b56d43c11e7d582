import { describe, expect, it } from "vitest";
import { staleFiles } from "../../scripts/generate/index.ts";

describe("generated files", () => {
  // Every generator runs (GraphQL Code Generator alone takes seconds), longer than the default 5 s on a busy machine.
  it("are current with the contract they are made from (npm run generate)", { timeout: 60_000 }, async () => {
    expect(await staleFiles()).toEqual([]);
  });
});
