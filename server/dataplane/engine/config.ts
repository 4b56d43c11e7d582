import type { SecretBox } from "../../platform/secrets.ts";
import { type DestinationAttributes, SECRET_ATTRIBUTES } from "../destinations/index.ts";

/** Destination types the engine can deliver to (the rest of the spec's list are names only). */
export const DELIVERABLE_DESTINATIONS = ["WEBHOOK", "POSTGRES", "S3", "AZURE", "SNOWFLAKE", "FUNCTION"] as const;

export const DEFAULT_MAX_RETRY = 3;
export const DEFAULT_RETRY_INTERVAL_SEC = 1;

/** What a secret is shown as, and what a form sends back to keep it. */
export const MASK = "********";

/** Attributes holding a URL, whose password (Basic authentication in the URL) is a secret as the others are. */
export const URL_ATTRIBUTES = ["url", "endpoint"];
/** The sealed secret a URL attribute's password is kept under. */
const passwordOf = (attribute: string) => `${attribute}:password`;

/** A URL with its password masked (`https://user:********@host/`); anything else as it is. */
export function maskUrlPassword(value: unknown): unknown {
  if (typeof value !== "string" || !URL.canParse(value)) return value;
  const url = new URL(value);
  if (!url.password) return value;
  url.password = MASK;
  return url.href;
}

/**
 * Splits attributes into what may be stored and shown, and the secrets (to be sealed): the secret
 * attributes, and the password of a URL, which is stored masked (a URL sent back masked keeps it).
 */
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
  for (const k of URL_ATTRIBUTES) {
    const value = shown[k];
    if (typeof value !== "string" || !URL.canParse(value) || !new URL(value).password) continue;
    secrets[passwordOf(k)] = new URL(value).password;
    shown[k] = maskUrlPassword(value);
  }
  return { shown, secrets };
}

/**
 * A row's secrets: the sealed ones, and the password of a URL stored before URL passwords were sealed
 * (it is sealed at the row's next change of its destination).
 */
export function storedSecrets(
  box: SecretBox,
  row: { destinationAttributes: Record<string, unknown>; destinationSecrets: string | null },
): Record<string, string> {
  const secrets = openSecrets(box, row.destinationSecrets);
  for (const k of URL_ATTRIBUTES) {
    const value = row.destinationAttributes[k];
    if (typeof value !== "string" || !URL.canParse(value)) continue;
    const { password } = new URL(value);
    if (password && password !== MASK && secrets[passwordOf(k)] === undefined) secrets[passwordOf(k)] = password;
  }
  return secrets;
}

/** Attributes with each URL's sealed password put back in its URL (what a destination connects with). */
export function withUrlPasswords(attrs: Record<string, unknown>): Record<string, unknown> {
  const whole = { ...attrs };
  for (const k of URL_ATTRIBUTES) {
    const password = whole[passwordOf(k)];
    delete whole[passwordOf(k)];
    const value = whole[k];
    if (typeof password !== "string" || typeof value !== "string" || !URL.canParse(value)) continue;
    const url = new URL(value);
    url.password = password;
    whole[k] = url.href;
  }
  return whole;
}

/** Whether a secret's key is a URL's password (shown inside its URL, not as an attribute of its own). */
export const isUrlPassword = (key: string) => key.endsWith(":password");

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
    ...withUrlPasswords({ ...row.destinationAttributes, ...openSecrets(box, row.destinationSecrets) }),
    type: row.destination,
  } as unknown as DestinationAttributes;
}

export function retryPolicy(attrs: Record<string, unknown>): { maxRetry: number; retryIntervalMs: number } {
  const maxRetry = typeof attrs.maxRetry === "number" ? attrs.maxRetry : DEFAULT_MAX_RETRY;
  const sec = typeof attrs.retryIntervalSec === "number" ? attrs.retryIntervalSec : DEFAULT_RETRY_INTERVAL_SEC;
  return { maxRetry: Math.max(0, maxRetry), retryIntervalMs: Math.max(0, sec) * 1000 };
}
