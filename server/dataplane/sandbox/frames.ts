import type { Socket } from "node:net";
import type { FilterError } from "./types.ts";

/**
 * Length-prefixed frames between the service and its sandbox process, over one pipe:
 *   u32 frame length | u32 header length | header (UTF-8 JSON) | body (text)
 * The body carries the bulky text (a batch, a result, helper arguments) as raw bytes, never escaped
 * inside JSON; ASCII text (every batch a node returns) is written as latin1, a plain byte copy.
 */
export interface Frame<H> {
  header: H;
  body: string;
}

const ASCII = 1;

export function writeFrame(socket: Socket, header: object, body = ""): void {
  const headerText = JSON.stringify(header);
  const headerBytes = Buffer.byteLength(headerText);
  const bodyBytes = Buffer.byteLength(body);
  const ascii = bodyBytes === body.length;
  const prefix = Buffer.allocUnsafe(9 + headerBytes);
  prefix.writeUInt32LE(5 + headerBytes + bodyBytes, 0);
  prefix.writeUInt32LE(headerBytes, 4);
  prefix[8] = ascii ? ASCII : 0;
  prefix.write(headerText, 9);
  socket.cork();
  socket.write(prefix);
  if (bodyBytes > 0) socket.write(body, ascii ? "latin1" : "utf8");
  socket.uncork();
}

/** Calls `onFrame` for each whole frame read from the socket. */
export function readFrames<H>(socket: Socket, onFrame: (frame: Frame<H>) => void): void {
  let chunks: Buffer[] = [];
  let buffered = 0;
  let need = -1;
  const take = (): Buffer => {
    const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, buffered);
    chunks = [all];
    return all;
  };
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    buffered += chunk.length;
    for (;;) {
      if (need < 0) {
        if (buffered < 4) return;
        need = take().readUInt32LE(0) + 4;
      }
      if (buffered < need) return;
      const all = take();
      const headerBytes = all.readUInt32LE(4);
      const encoding = all[8] === ASCII ? "latin1" : "utf8";
      const header = JSON.parse(all.toString("utf8", 9, 9 + headerBytes)) as H;
      const body = all.toString(encoding, 9 + headerBytes, need);
      const rest = all.subarray(need);
      chunks = rest.length > 0 ? [rest] : [];
      buffered = rest.length;
      need = -1;
      onFrame({ header, body });
    }
  });
}

/** What the service sends the sandbox process. */
export type ToHost =
  /** Body: the user's source. Compiles it in a new isolate and runs its top level. */
  | {
      op: "open";
      fid: number;
      version: number;
      timeoutMs: number;
      memoryMiB: number;
      maxLogLines: number;
      maxLogChars: number;
      /** The helpers answer itemsSnapshot: membership checks use sets kept in the isolate. */
      snapshots: boolean;
    }
  /** Body: the batch's JSON text. */
  | { op: "run"; fid: number; rid: number; meta: string; timeoutMs: number }
  /** Body: the helper's result as JSON (ok) or its error message. */
  | { op: "helped"; rid: number; hid: number; ok: boolean }
  | { op: "close"; fid: number };

/** What the sandbox process answers. */
export type FromHost =
  | { op: "ready" }
  | { op: "opened"; fid: number; error: FilterError | null }
  /**
   * Body: the guest's encoded outcome (see bootstrap.ts) when error is null; otherwise the logs
   * written before the failure, as encoded by the guest (may be empty). The isolate is dropped after
   * any failure, so the next call starts from a fresh one.
   */
  | { op: "done"; rid: number; heapBytes: number; error: FilterError | null }
  /** Body: the arguments as a JSON array. */
  | { op: "helper"; rid: number; hid: number; name: string }
  /** V8 lost control of an isolate: the process must be replaced. */
  | { op: "fatal"; fid: number | null; message: string };
