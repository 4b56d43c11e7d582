import { readFileSync } from "node:fs";
import path from "node:path";
import { addonOwningMethod } from "../addons/catalogue.ts";
import { findNetwork } from "../catalogue/networks.ts";

/** schemas/catalogue/method-credits.json: what a call costs (its $comment states the rules). */
export interface CreditsCatalogue {
  baseCredits: Record<string, number>;
  archiveMultiplier: number;
  archiveDepthBlocks: number;
  multipliers: { pattern: string; multiplier: number }[];
  blockParams: Record<string, unknown>;
}

export function loadCreditsCatalogue(
  file = path.resolve(import.meta.dirname, "../../../schemas/catalogue/method-credits.json"),
): CreditsCatalogue {
  return JSON.parse(readFileSync(file, "utf8")) as CreditsCatalogue;
}

export interface CallCost {
  credits: number;
  multiplier: number;
  archive: boolean;
}

/** Prices calls; per-method and per-network lookups are remembered, so the hot path is two map reads. */
export class CreditTable {
  private readonly multipliers = new Map<string, number>();
  private readonly bases = new Map<string, number>();

  constructor(readonly catalogue: CreditsCatalogue = loadCreditsCatalogue()) {}

  baseOf(network: string): number {
    let base = this.bases.get(network);
    if (base === undefined) {
      const compatibility = findNetwork(network)?.chain.chainCompatibility ?? "default";
      base = this.catalogue.baseCredits[compatibility] ?? this.catalogue.baseCredits.default ?? 1;
      this.bases.set(network, base);
    }
    return base;
  }

  multiplierOf(method: string): number {
    let m = this.multipliers.get(method);
    if (m === undefined) {
      // An add-on's method is priced by the add-on (its creditMultiplier), the one place its price is set.
      m = addonOwningMethod(method)?.creditMultiplier ?? this.patternMultiplier(method);
      // Methods are client-chosen strings: keep the memo bounded.
      if (this.multipliers.size > 10_000) this.multipliers.clear();
      this.multipliers.set(method, m);
    }
    return m;
  }

  private patternMultiplier(method: string): number {
    for (const rule of this.catalogue.multipliers) {
      const matches = rule.pattern.endsWith("*")
        ? method.startsWith(rule.pattern.slice(0, -1))
        : method === rule.pattern;
      if (matches) return rule.multiplier;
    }
    return 1;
  }

  /**
   * An archive call names a block more than archiveDepthBlocks behind the head (a hex or decimal number,
   * or "earliest"). Without a known head only "earliest" and block 0 count.
   */
  isArchive(method: string, params: unknown, head: number | undefined): boolean {
    const where = this.catalogue.blockParams[method];
    if (!Array.isArray(where) || !Array.isArray(params)) return false;
    let value: unknown = params[where[0] as number];
    if (where.length > 1 && value && typeof value === "object")
      value = (value as Record<string, unknown>)[where[1] as string];
    if (value && typeof value === "object" && "blockNumber" in value)
      value = (value as { blockNumber: unknown }).blockNumber;
    if (value === "earliest") return true;
    const n =
      typeof value === "number"
        ? value
        : typeof value === "string" && /^0x[0-9a-f]+$/i.test(value)
          ? Number.parseInt(value, 16)
          : Number.NaN;
    if (!Number.isFinite(n)) return false;
    if (head === undefined) return n === 0;
    return head - n > this.catalogue.archiveDepthBlocks;
  }

  cost(network: string, method: string, params: unknown, head: number | undefined): CallCost {
    const multiplier = this.multiplierOf(method);
    const archive = params !== undefined && this.isArchive(method, params, head);
    const credits = this.baseOf(network) * multiplier * (archive ? this.catalogue.archiveMultiplier : 1);
    return { credits, multiplier, archive };
  }
}
