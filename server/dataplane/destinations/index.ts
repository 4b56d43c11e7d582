import type { EgressPolicy } from "../../platform/egress.ts";
import { AzureDestination } from "./azure.ts";
import { errorMessage, isEgressRefusal, redact, secretsOf } from "./common.ts";
import { FunctionDestination } from "./function.ts";
import { PostgresDestination } from "./postgres.ts";
import { S3Destination } from "./s3.ts";
import { SnowflakeDestination } from "./snowflake.ts";
import {
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationAttributes,
  type DestinationContext,
  DestinationError,
  type FunctionInvoker,
  type PreparedDelivery,
  type TestResult,
} from "./types.ts";
import { WebhookDestination } from "./webhook.ts";

export { type NamedAddress, namedAddresses } from "./addresses.ts";
export { BZIP2_UNSUPPORTED } from "./common.ts";
export { signPayload, verifySignature } from "./signature.ts";
export * from "./types.ts";

export interface DestinationDeps {
  /** Where destinations may connect: every host a tenant names goes through it. */
  egress: EgressPolicy;
  /** The functions runtime; without it a FUNCTION destination cannot be created. */
  functionInvoker?: FunctionInvoker;
}

/**
 * Makes the destination for a stream. Throws a non-retryable {@link DestinationError} for attributes
 * that cannot work (bad table name, BZIP2, unsupported type, no functions runtime). Every message that
 * leaves a destination — thrown or in a TestResult — has the attributes' secrets cut out.
 */
export function createDestination(
  attrs: DestinationAttributes,
  ctx: DestinationContext,
  deps: DestinationDeps,
): Destination {
  const secrets = secretsOf(attrs);
  let inner: Destination;
  try {
    inner = build(attrs, ctx, deps);
  } catch (e) {
    throw sanitize(e, secrets);
  }
  return new RedactingDestination(inner, secrets);
}

function build(attrs: DestinationAttributes, ctx: DestinationContext, deps: DestinationDeps): Destination {
  switch (attrs.type) {
    case "WEBHOOK":
      return new WebhookDestination(attrs, ctx, deps.egress);
    case "POSTGRES":
      return new PostgresDestination(attrs, ctx, deps.egress);
    case "S3":
      return new S3Destination(attrs, ctx, deps.egress);
    case "AZURE":
      return new AzureDestination(attrs, ctx, deps.egress);
    case "SNOWFLAKE":
      return new SnowflakeDestination(attrs, ctx, deps.egress);
    case "FUNCTION":
      if (!deps.functionInvoker) {
        throw new DestinationError("functions runtime not connected: FUNCTION destinations cannot run yet", {
          retryable: false,
        });
      }
      return new FunctionDestination(attrs, ctx, deps.functionInvoker);
    default: {
      const type = (attrs as { type?: unknown }).type;
      throw new DestinationError(`destination type ${String(type)} is not supported`, { retryable: false });
    }
  }
}

function sanitize(e: unknown, secrets: string[]): DestinationError {
  const message = redact(errorMessage(e), secrets);
  if (e instanceof DestinationError) return new DestinationError(message, e.options);
  return new DestinationError(message, { retryable: !isEgressRefusal(e) });
}

/** The one place secrets are cut out of what a destination says (the error's cause and stack are dropped). */
class RedactingDestination implements Destination {
  readonly prepare?: (batch: DeliveryBatch) => PreparedDelivery;

  constructor(
    private readonly inner: Destination,
    private readonly secrets: string[],
  ) {
    const prepareInner = inner.prepare?.bind(inner);
    if (prepareInner) {
      this.prepare = (batch) => {
        const prepared = prepareInner(batch);
        return {
          send: () =>
            prepared.send().catch((e: unknown) => {
              throw sanitize(e, this.secrets);
            }),
        };
      };
    }
  }

  get type() {
    return this.inner.type;
  }

  async test(): Promise<TestResult> {
    try {
      const r = await this.inner.test();
      return { ...r, message: redact(r.message, this.secrets) };
    } catch (e) {
      return { ok: false, message: sanitize(e, this.secrets).message, durationMs: 0 };
    }
  }

  async deliver(batch: DeliveryBatch): Promise<DeliveryAck> {
    try {
      return await this.inner.deliver(batch);
    } catch (e) {
      throw sanitize(e, this.secrets);
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
