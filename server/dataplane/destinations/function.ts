import { batchMetadata, errorMessage } from "./common.ts";
import {
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationContext,
  DestinationError,
  type FunctionAttributes,
  type FunctionCall,
  type FunctionInvoker,
  type TestResult,
} from "./types.ts";

/**
 * Hands each batch to one of the stream account's Functions through the {@link FunctionInvoker} (the
 * functions runtime runs it in-process, so the attributes' securityToken signs nothing). test() invokes
 * the function with an empty batch (`data: []`, metadata.test = true).
 */
export class FunctionDestination implements Destination {
  readonly type = "FUNCTION";
  private readonly timeoutMs: number;
  private readonly accountId: string;

  constructor(
    private readonly attrs: FunctionAttributes,
    private readonly ctx: DestinationContext,
    private readonly invoker: FunctionInvoker,
  ) {
    if (!attrs.functionID) throw new DestinationError("functionID is required", { retryable: false });
    if (!ctx.accountId)
      throw new DestinationError("a function destination needs the stream's account", { retryable: false });
    this.accountId = ctx.accountId;
    this.timeoutMs = Math.max(1, attrs.postTimeoutSec ?? 30) * 1000;
  }

  async test(): Promise<TestResult> {
    const t = performance.now();
    try {
      const r = await this.invoker.invoke(
        { ...this.call(), test: true },
        { dataJson: "[]", metadata: { test: true } },
        { timeoutMs: this.timeoutMs },
      );
      return {
        ok: r.ok,
        message: r.ok ? `function ${this.attrs.functionID} ran` : (r.message ?? "function failed"),
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
      this.call(batch.startBlock),
      { dataJson: batch.payloadJson, metadata },
      { timeoutMs: this.timeoutMs },
    );
    if (!r.ok) {
      throw new DestinationError(`function ${this.attrs.functionID} failed: ${r.message ?? "no reason given"}`, {
        retryable: true,
        uncounted: r.uncounted === true,
      });
    }
    return {
      bytes: r.bytes ?? Buffer.byteLength(batch.payloadJson),
      durationMs: performance.now() - t,
      detail: `function ${this.attrs.functionID}`,
    };
  }

  private call(blockNumber?: number): FunctionCall {
    return {
      accountId: this.accountId,
      functionId: this.attrs.functionID,
      streamId: this.ctx.streamId,
      network: this.ctx.network,
      dataset: this.ctx.dataset,
      blockNumber,
    };
  }

  async close(): Promise<void> {}
}
