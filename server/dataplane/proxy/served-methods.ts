import { errorObject, type JsonRpcCall, refusal } from "./jsonrpc.ts";

/**
 * Methods the service answers itself instead of the node (the token add-ons', from the token index): a
 * call of one passes the same checks, gating and rate limits as any call, is answered here and is never
 * forwarded. The proxy only knows them as functions of a call's params and the endpoint's network.
 */
export type ServedMethod = (params: unknown, context: { network: string }) => Promise<unknown>;
export type ServedMethods = ReadonlyMap<string, ServedMethod>;

/** An error a served method throws to answer the caller with (invalid params naming the argument). */
interface CallerError {
  toJsonRpc(): { code: number; message: string; data?: unknown };
}

const isCallerError = (error: unknown): error is CallerError =>
  typeof error === "object" && error !== null && typeof (error as CallerError).toJsonRpc === "function";

/**
 * The answer object (JSON text) of a call a served method answers. A caller's error (bad params) is its
 * JSON-RPC error; anything else is reported and answered as an internal error, never with its message.
 */
export async function serveCall(
  served: ServedMethods,
  call: JsonRpcCall,
  network: string,
  onError: ((error: unknown) => void) | undefined,
): Promise<string> {
  const id = call.id ?? null;
  const method = served.get(call.method);
  try {
    // The proxy picked this call by its method (served.has), so the method is there.
    const result = await (method as ServedMethod)(call.params ?? [], { network });
    return JSON.stringify({ jsonrpc: "2.0", id, result });
  } catch (error) {
    if (isCallerError(error)) return JSON.stringify({ jsonrpc: "2.0", id, error: error.toJsonRpc() });
    onError?.(error);
    return errorObject(id, refusal("INTERNAL"));
  }
}
