import { readCheckedCatalogue } from "../../platform/catalogue-data.ts";

/** A plan as `schemas/catalogue/plans.json` declares it (its schema: plans.schema.json). Money in cents. */
export interface CataloguePlan {
  id: string;
  kind: string;
  name: string;
  prettyName: string;
  description: string;
  priceCents: number;
  yearlyPriceCents: number;
  defaultEndpointLimit: number;
  /** The monthly allowance, counted in credits (decision 0018). */
  defaultResponsesPerMonth: number;
  defaultRequestsPerSecond: number;
  /** Price of a million credits above the allowance; null: the plan stops at LIMIT_REACHED. */
  overageCentsPerMillionCredits: number | null;
  trialDays: number;
  features: string[];
  deliveryHistoryDays: number;
}

export type BillingInterval = "MONTHLY" | "YEARLY";

const catalogue = readCheckedCatalogue<{ plans: CataloguePlan[] }>("plans");
const byId: ReadonlyMap<string, CataloguePlan> = new Map(catalogue.plans.map((p) => [p.id, p]));

/** The plans, as the catalogue orders them (cheapest first). */
export const cataloguePlans = (): readonly CataloguePlan[] => catalogue.plans;

export const cataloguePlan = (planId: string): CataloguePlan | undefined => byId.get(planId);

/** The price of one licence of the plan: a month or a year. */
export const licencePriceCents = (plan: CataloguePlan, interval: BillingInterval) =>
  interval === "YEARLY" ? plan.yearlyPriceCents : plan.priceCents;

/** The limits a subscription on the plan is held to: the one place they come from (the row keeps a copy). */
export const planLimits = (plan: CataloguePlan) => ({
  endpointLimit: plan.defaultEndpointLimit,
  responsesPerMonth: plan.defaultResponsesPerMonth,
  requestsPerSecond: plan.defaultRequestsPerSecond,
});
