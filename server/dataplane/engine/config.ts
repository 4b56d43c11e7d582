import type { SecretBox } from "../../platform/secrets.ts";
import { type DestinationAttributes, SECRET_ATTRIBUTES } from "../destinations/index.ts";

/** Destination types the engine can deliver to (the rest of the spec's list are names only). */
export const DELIVERABLE_DESTINATIONS = ["WEBHOOK", "POSTGRES", "S3", "AZURE", "SNOWFLAKE", "FUNCTION"] as const;

export const DEFAULT_MAX_RETRY = 3;
export const DEFAULT_RETRY_INTERVAL_SEC = 1;

/** Splits attributes into what may be stored and shown, and the secrets (to be sealed). */
export function splitSecrets(attrs: Record<string, unknown>): {
  shown: Record<string, unknown>;
  secrets: Record<string, string>;
} {
  const shown: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const [k, v] of Object.entries(attrs)) {
    if ((SECRET_ATTRIBUTES as readonly string[]).includes(k)) {
      if (typeof v === "string" && v.length > 0) secrets[k] = v;
    } else if (k !== "type") shown[k] = v;
  }
  return { shown, secrets };
}

export function sealSecrets(box: SecretBox, secrets: Record<string, string>): string | null {
  return Object.keys(secrets).length > 0 ? box.encrypt(JSON.stringify(secrets)) : null;
}

export function openSecrets(box: SecretBox, sealed: string | null): Record<string, string> {
  return sealed ? (JSON.parse(box.decrypt(sealed)) as Record<string, string>) : {};
}

/** The full attributes a destination is made from: the stored ones, the opened secrets and the type. */
export function destinationAttributesOf(
  box: SecretBox,
  row: { destination: string; destinationAttributes: Record<string, unknown>; destinationSecrets: string | null },
): DestinationAttributes {
  return {
    ...row.destinationAttributes,
    ...openSecrets(box, row.destinationSecrets),
    type: row.destination,
  } as unknown as DestinationAttributes;
}

export function retryPolicy(attrs: Record<string, unknown>): { maxRetry: number; retryIntervalMs: number } {
  const maxRetry = typeof attrs.maxRetry === "number" ? attrs.maxRetry : DEFAULT_MAX_RETRY;
  const sec = typeof attrs.retryIntervalSec === "number" ? attrs.retryIntervalSec : DEFAULT_RETRY_INTERVAL_SEC;
  return { maxRetry: Math.max(0, maxRetry), retryIntervalMs: Math.max(0, sec) * 1000 };
}
