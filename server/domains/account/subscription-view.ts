import { foundOr } from "../../platform/errors.ts";
import { cataloguePlan } from "./plan-catalogue.ts";
import type { PlanRow, SubscriptionRow } from "./store.ts";

/** A plan as the API shows it: its row, and what the catalogue alone says (prices by interval, overage, trial, features). */
export function planView(plan: PlanRow) {
  const terms = foundOr(cataloguePlan(plan.id), "The plan");
  return {
    id: plan.id,
    kind: plan.kind,
    name: plan.name,
    prettyName: plan.prettyName,
    price: plan.priceCents,
    createdAt: plan.createdAt,
    description: plan.description,
    defaultEndpointLimit: plan.defaultEndpointLimit,
    defaultResponsesPerMonth: plan.defaultResponsesPerMonth,
    defaultRequestsPerSecond: plan.defaultRequestsPerSecond,
    yearlyPrice: terms.yearlyPriceCents,
    overagePricePerMillionCredits: terms.overageCentsPerMillionCredits,
    trialDays: terms.trialDays,
    features: terms.features,
  };
}

/** The subscription row's fields as the API shows them (billing's own fields are resolved by billing). */
export function subscriptionView(sub: SubscriptionRow, plan: PlanRow) {
  return {
    id: sub.id,
    isActive: sub.status === "active",
    status: sub.status,
    plan: planView(plan),
    interval: sub.interval,
    startDate: sub.startDate,
    currentPeriodStartDate: sub.currentPeriodStart,
    currentPeriodEndDate: sub.currentPeriodEnd,
    endpointLimit: sub.endpointLimit,
    responsesPerMonth: sub.responsesPerMonth,
    requestsPerSecond: sub.requestsPerSecond,
  };
}
export type SubscriptionView = ReturnType<typeof subscriptionView>;
