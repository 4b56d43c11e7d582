/**
 * What billing needs of the add-on marketplace: the lines a period's add-on installs cost (the
 * marketplace prices an install; billing adds what it says to the period's invoice as ADDON lines).
 * The marketplace's domain supplies the adapter and app.ts wires it; an installation without the
 * marketplace has no installs, and so no add-on lines.
 */
export interface AddonCharges {
  periodLines(
    accountId: string,
    period: { start: Date; end: Date },
  ): Promise<{ description: string; amountCents: number }[]>;
}

export const withoutMarketplace: AddonCharges = { periodLines: async () => [] };
