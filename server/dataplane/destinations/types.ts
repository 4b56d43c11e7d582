import type {
  StreamAzureAttributes,
  StreamFunctionAttributes,
  StreamPostgresAttributes,
  StreamS3Attributes,
  StreamSnowflakeAttributes,
  StreamWebhookAttributes,
} from "../../../schemas/generated/entities.ts";
/**
 * What the stream/webhook engine calls to deliver batches. One {@link Destination} per stream,
 * made by `createDestination(attributes, context)` from the stream's typed destination attributes
 * (the spec's "Destination attributes by type"). The engine owns retries: a failed deliver throws a
 * {@link DestinationError}; the engine waits `retryIntervalSec` and tries again up to `maxRetry` times.
 */

export type Compression = "NONE" | "GZIP" | "BZIP2";
export type FileType = "JSON" | "PARQUET";
export type SslMode = "DISABLE" | "REQUIRE";
export type MetadataMode = "BODY" | "HEADER" | "NONE";

// Each destination's attributes are the stream entity schema's (schemas/entities/stream.schema.json,
// generated into schemas/generated/entities.ts), tagged with the destination they belong to.
export type WebhookAttributes = StreamWebhookAttributes & { type: "WEBHOOK" };
export type PostgresAttributes = StreamPostgresAttributes & { type: "POSTGRES" };
export type S3Attributes = StreamS3Attributes & { type: "S3" };
export type AzureAttributes = StreamAzureAttributes & { type: "AZURE" };
export type SnowflakeAttributes = StreamSnowflakeAttributes & { type: "SNOWFLAKE" };
export type FunctionAttributes = StreamFunctionAttributes & { type: "FUNCTION" };

export type DestinationAttributes =
  | WebhookAttributes
  | PostgresAttributes
  | S3Attributes
  | AzureAttributes
  | SnowflakeAttributes
  | FunctionAttributes;
export type DestinationType = DestinationAttributes["type"] | "KAFKA" | "MONGO" | "MYSQL" | "REDIS";

/** Attribute names whose values are secrets: never returned, never logged, never in an error. */
export const SECRET_ATTRIBUTES = ["secretKey", "sasToken", "securityToken", "password"] as const;

/** Facts about the stream that do not change between batches. */
export interface DestinationContext {
  streamId: string;
  /** The stream's account: a FUNCTION destination runs only that account's functions. */
  accountId?: string;
  network: string;
  dataset: string;
  /** Where batch metadata goes (webhook and function destinations); default NONE. */
  metadata?: MetadataMode;
}

export interface DeliveryBatch {
  /** First and last block of the batch (inclusive). */
  startBlock: number;
  endBlock: number;
  /** The payload as JSON text: the filter's result, or the dataset items when there is no filter. */
  payloadJson: string;
  /** True when this batch re-delivers blocks after a chain reorganisation. */
  isReorg?: boolean;
}

export interface DeliveryAck {
  /** Bytes sent on the wire (after compression). */
  bytes: number;
  durationMs: number;
  /** Where it went: HTTP status, object key, table and row id. */
  detail: string;
  /** The HTTP status, when the destination is a URL. */
  status?: number;
}

export interface TestResult {
  ok: boolean;
  /** What was checked, or exactly why it failed (never a secret). */
  message: string;
  durationMs: number;
}

export interface Destination {
  readonly type: DestinationAttributes["type"];
  /** Connectivity and permission check; writes nothing, or a small probe it removes (see each type). */
  test(): Promise<TestResult>;
  deliver(batch: DeliveryBatch): Promise<DeliveryAck>;
  /**
   * Optional: does ahead of time what deliver() would do before sending (the engine calls it while
   * the previous batch is in flight); send() then delivers as deliver() would, failing the same ways.
   */
  prepare?(batch: DeliveryBatch): PreparedDelivery;
  /** Releases connections and pools. */
  close(): Promise<void>;
}

/** A delivery made ready by {@link Destination.prepare}. */
export interface PreparedDelivery {
  send(): Promise<DeliveryAck>;
}

/**
 * A failed delivery or a destination that cannot be made. `retryable` tells the engine whether
 * retrying can help (network errors, 5xx, 429) or not (bad configuration, 4xx, unsupported option).
 */
export class DestinationError extends Error {
  constructor(
    message: string,
    readonly options: {
      retryable: boolean;
      status?: number;
      /** Not the stream's doing (a function's sandbox was replaced around its call): retried uncounted. */
      uncounted?: boolean;
    } = { retryable: true },
  ) {
    super(message);
    this.name = "DestinationError";
  }
  get retryable(): boolean {
    return this.options.retryable;
  }
  get status(): number | undefined {
    return this.options.status;
  }
  get uncounted(): boolean {
    return this.options.uncounted === true;
  }
}

/** Which function a FUNCTION destination calls, for whom, and for which batch (its history records this). */
export interface FunctionCall {
  accountId: string;
  functionId: string;
  streamId: string;
  network: string;
  dataset: string;
  blockNumber?: number;
  /** A destination test (an empty batch), not a delivery. */
  test?: boolean;
}

/**
 * The functions runtime as destinations see it (server/domains/functions/invoker.ts). Without one,
 * creating a FUNCTION destination fails with "functions runtime not connected".
 */
export interface FunctionInvoker {
  invoke(
    call: FunctionCall,
    /** The batch's payload as JSON text, and its metadata. */
    payload: { dataJson: string; metadata?: Record<string, unknown> },
    options: { timeoutMs: number },
  ): Promise<{
    ok: boolean;
    message?: string;
    bytes?: number;
    /** The run failed with its sandbox, replaced because of another call (not billed; retried uncounted). */
    uncounted?: boolean;
  }>;
}
