import { describe, expect, it } from "vitest";
import { staleFiles } from "../../scripts/generate/index.ts";

describe("generated files", () => {
  it("are current with the contract they are made from (npm run generate)", async () => {
    expect(await staleFiles()).toEqual([]);
  });
});
