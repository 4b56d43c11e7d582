// Every table of the service, for drizzle-kit's migration generator (drizzle.config.ts) and tests that
// compare the schema with the database. A new domain adds its tables here.
export { mailOutbox } from "../platform/mail.ts";
export * from "./account/tables.ts";
export * from "./addons/tables.ts";
export * from "./audit/tables.ts";
export * from "./billing/crypto/tables.ts";
export * from "./billing/payments/tables.ts";
export * from "./billing/tables.ts";
export * from "./endpoints/tables.ts";
export * from "./errorlogs/tables.ts";
export * from "./functions/tables.ts";
export * from "./idempotency/tables.ts";
export * from "./inspector/tables.ts";
export * from "./kv/tables.ts";
export * from "./ratelimits/tables.ts";
export * from "./security/tables.ts";
export * from "./streams/tables.ts";
export * from "./token-index/tables.ts";
export * from "./tokens/tables.ts";
export * from "./usage/tables.ts";
