// A start skips the checks of the checkout's data that passed on the same bytes, and only those.
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkOnce } from "../../../server/platform/checked-once.ts";

function checkout(): string {
  const root = mkdtempSync(path.join(tmpdir(), "nodeplane-checked-once-"));
  mkdirSync(path.join(root, "schemas/catalogue"), { recursive: true });
  mkdirSync(path.join(root, "server"), { recursive: true });
  writeFileSync(path.join(root, "schemas/catalogue/plans.json"), '{ "plans": [] }\n');
  writeFileSync(path.join(root, "server/check.ts"), "export const rule = 1;\n");
  writeFileSync(path.join(root, "package-lock.json"), "{}\n");
  return root;
}

describe("checkOnce", () => {
  it("runs a check once for the same inputs; a check that failed runs again at the next start", () => {
    const root = checkout();
    let runs = 0;
    const passing = () => {
      runs++;
    };
    checkOnce(root, "plans", passing);
    checkOnce(root, "plans", passing);
    expect(runs).toBe(1);

    let failures = 0;
    const failing = () => {
      failures++;
      throw new Error("schemas/catalogue/plans.json /plans: must be array");
    };
    expect(() => checkOnce(root, "coupons", failing)).toThrow("must be array");
    expect(() => checkOnce(root, "coupons", failing)).toThrow("must be array");
    expect(failures).toBe(2);
  });

  it("runs every check again when a byte of the data, the checking code or the package lock changed", () => {
    const root = checkout();
    checkOnce(root, "plans", () => undefined);
    for (const changed of ["schemas/catalogue/plans.json", "server/check.ts", "package-lock.json"]) {
      // Another checkout with the record of the first: a start of this one hashes its own inputs.
      const copy = mkdtempSync(path.join(tmpdir(), "nodeplane-checked-once-"));
      cpSync(root, copy, { recursive: true });
      writeFileSync(path.join(copy, changed), "{ }\n");
      let runs = 0;
      checkOnce(copy, "plans", () => {
        runs++;
      });
      expect(runs).toBe(1);
    }
    const unchanged = mkdtempSync(path.join(tmpdir(), "nodeplane-checked-once-"));
    cpSync(root, unchanged, { recursive: true });
    checkOnce(unchanged, "plans", () => {
      throw new Error("not run: it passed on these bytes");
    });
  });
});
