/**
 * What other domains may use of streams: this folder's public entry (tests/contract/layers.test.ts holds
 * other domains to it; docs/decisions/0300-domain-imports.md). Webhooks are the spec's simpler product on
 * the same delivery pipeline: rows of the delivery engine's tables with product WEBHOOK, created and
 * changed by the same rules, read from the chain the same way. Functions read blocks through the chain
 * reads, and fill the StreamFunctions port.
 */
export { FAILING_SHOWN, listDeliveries } from "./deliveries.ts";
export { streamState } from "./lifecycle.ts";
export {
  type NewStreamFunction,
  type StreamFunctions,
  type StreamsServices,
  streamsRuntime,
} from "./runtime.ts";
export {
  activateStream,
  blockPayload,
  type ChainReadFor,
  createStream,
  latestBlock,
  metricBuckets,
  pauseStream,
  payloadResult,
  progressOf,
  readBatch,
  runFilterOn,
  type StreamInput,
  shownAttributes,
  storedAttributes,
  streamLogs,
  testDestination,
  updateStream,
} from "./service.ts";
export { destinationSigningSecrets } from "./signing-secrets.ts";
export type { StreamRow } from "./store.ts";
export { streams } from "./tables.ts";
