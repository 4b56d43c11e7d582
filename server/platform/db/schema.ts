// Every domain's tables, for Drizzle's typed queries and for drizzle-kit's migration generator.
export * from "../../domains/account/tables.ts";
export * from "../../domains/endpoints/tables.ts";
export * from "../../domains/errorlogs/tables.ts";
export * from "../../domains/functions/tables.ts";
export * from "../../domains/ratelimits/tables.ts";
export * from "../../domains/security/tables.ts";
export * from "../../domains/streams/tables.ts";
export * from "../../domains/usage/tables.ts";
export { mailOutbox } from "../mail.ts";
