import { batchMetadata, errorMessage } from "./common.ts";
import {
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationContext,
  DestinationError,
  type FunctionAttributes,
  type FunctionInvoker,
  type TestResult,
} from "./types.ts";

/**
 * Hands each batch to a Function through the {@link FunctionInvoker} seam that the functions runtime
 * provides. test() invokes the function with an empty batch (`data: []`, metadata.test = true).
 */
export class FunctionDestination implements Destination {
  readonly type = "FUNCTION";
  private readonly timeoutMs: number;

  constructor(
    private readonly attrs: FunctionAttributes,
    private readonly ctx: DestinationContext,
    private readonly invoker: FunctionInvoker,
  ) {
    if (!attrs.functionID) throw new DestinationError("functionID is required", { retryable: false });
    this.timeoutMs = Math.max(1, attrs.postTimeoutSec ?? 30) * 1000;
  }

  async test(): Promise<TestResult> {
    const t = performance.now();
    try {
      const r = await this.invoker.invoke(
        this.attrs.functionID,
        { data: [], metadata: { test: true } },
        { timeoutMs: this.timeoutMs, securityToken: this.attrs.securityToken },
      );
      return {
        ok: r.ok,
        message: r.ok ? `function ${this.attrs.functionID} answered` : (r.message ?? `function failed (${r.status})`),
        durationMs: performance.now() - t,
      };
    } catch (e) {
      return { ok: false, message: errorMessage(e), durationMs: performance.now() - t };
    }
  }

  async deliver(batch: DeliveryBatch): Promise<DeliveryAck> {
    const t = performance.now();
    const metadata = this.ctx.metadata === "NONE" ? undefined : batchMetadata(this.ctx, batch);
    const r = await this.invoker.invoke(
      this.attrs.functionID,
      { data: JSON.parse(batch.payloadJson) as unknown, metadata },
      { timeoutMs: this.timeoutMs, securityToken: this.attrs.securityToken },
    );
    if (!r.ok) {
      throw new DestinationError(`function ${this.attrs.functionID} failed: ${r.message ?? `status ${r.status}`}`, {
        retryable: true,
        status: r.status,
      });
    }
    return {
      bytes: r.bytes ?? Buffer.byteLength(batch.payloadJson),
      durationMs: performance.now() - t,
      detail: `function ${this.attrs.functionID}`,
    };
  }

  async close(): Promise<void> {}
}
