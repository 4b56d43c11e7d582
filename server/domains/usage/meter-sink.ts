import type { MeterSink } from "../../dataplane/metering/meter.ts";
import type { Db } from "../../platform/db/index.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { accountsWithStatus } from "../endpoints/service.ts";
import { pruneErrorLogs, recordFailedCalls } from "../errorlogs/service.ts";
import { pruneEndpointMetrics } from "./endpoint-metrics.ts";
import { enforceMonthlyLimit } from "./service.ts";
import * as usageStore from "./store.ts";

/** The proxy meter's sink on this service's database: usage minutes, endpoint metrics, error logs and the monthly limit. */
export function databaseMeterSink(db: Db, events: DomainEvents): MeterSink {
  return {
    addUsage: (rows) => usageStore.addMinutes(db, rows),
    addEndpointMinutes: (rows) => usageStore.addEndpointMinutes(db, rows),
    addFailedCalls: (rows) => recordFailedCalls(db, rows),
    enforceMonthlyLimit: (accountId) => enforceMonthlyLimit(db, events, accountId),
    accountsAtLimit: () => accountsWithStatus(db, "LIMIT_REACHED"),
    pruneFailedCalls: async (retentionDays) => {
      await pruneErrorLogs(db, retentionDays);
    },
    pruneEndpointMinutes: async () => {
      await pruneEndpointMetrics(db);
    },
  };
}
