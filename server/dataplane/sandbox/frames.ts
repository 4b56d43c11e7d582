import { readSync, writevSync } from "node:fs";
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

/** The frame's prefix (lengths and header) and how to write its body. */
function prefixOf(header: object, body: string): { prefix: Buffer; encoding: BufferEncoding; bodyBytes: number } {
  const headerText = JSON.stringify(header);
  const headerBytes = Buffer.byteLength(headerText);
  const bodyBytes = Buffer.byteLength(body);
  const ascii = bodyBytes === body.length;
  const prefix = Buffer.allocUnsafe(9 + headerBytes);
  prefix.writeUInt32LE(5 + headerBytes + bodyBytes, 0);
  prefix.writeUInt32LE(headerBytes, 4);
  prefix[8] = ascii ? ASCII : 0;
  prefix.write(headerText, 9);
  return { prefix, encoding: ascii ? "latin1" : "utf8", bodyBytes };
}

export function writeFrame(socket: Socket, header: object, body = ""): void {
  const { prefix, encoding, bodyBytes } = prefixOf(header, body);
  socket.cork();
  socket.write(prefix);
  if (bodyBytes > 0) socket.write(body, encoding);
  socket.uncork();
}

/** The same on a blocking descriptor, written before returning (the sandbox process's fast lane). */
export function writeFrameSync(fd: number, header: object, body = ""): void {
  const { prefix, encoding, bodyBytes } = prefixOf(header, body);
  let parts = bodyBytes > 0 ? [prefix, Buffer.from(body, encoding)] : [prefix];
  for (;;) {
    let written = writevSync(fd, parts);
    const rest: Buffer[] = [];
    for (const part of parts) {
      if (written >= part.length) written -= part.length;
      else {
        rest.push(part.subarray(written));
        written = 0;
      }
    }
    if (rest.length === 0) return;
    parts = rest;
  }
}

/**
 * Frames read from a blocking descriptor without Node's event loop: next() waits in read(2) until a
 * whole frame is there. A wait in the kernel wakes about as fast as a thread can, where the event
 * loop adds its own turn (measured: ~45 µs against ~75 µs for a small request and its answer).
 */
export class SyncFrameReader<H> {
  private buffer = Buffer.allocUnsafe(1 << 20);
  private start = 0;
  private end = 0;

  constructor(private readonly fd: number) {}

  /** The next frame; null when the other side closed the pipe. */
  next(): Frame<H> | null {
    // Everything read was taken: the next frame starts at the front, with the whole buffer for it.
    if (this.start === this.end) this.start = this.end = 0;
    for (;;) {
      const available = this.end - this.start;
      if (available >= 4) {
        const need = this.buffer.readUInt32LE(this.start) + 4;
        if (available >= need) {
          const at = this.start;
          this.start += need;
          const headerBytes = this.buffer.readUInt32LE(at + 4);
          const encoding = this.buffer[at + 8] === ASCII ? "latin1" : "utf8";
          const header = JSON.parse(this.buffer.toString("utf8", at + 9, at + 9 + headerBytes)) as H;
          return { header, body: this.buffer.toString(encoding, at + 9 + headerBytes, at + need) };
        }
        this.room(need);
      } else this.room(4);
      const n = readSync(this.fd, this.buffer, this.end, this.buffer.length - this.end, null);
      if (n === 0) return null;
      this.end += n;
    }
  }

  /** Makes room after the unread bytes for a frame of `need` bytes. */
  private room(need: number): void {
    if (this.start + need <= this.buffer.length && this.end < this.buffer.length) return;
    const unread = this.buffer.subarray(this.start, this.end);
    const target = need > this.buffer.length ? Buffer.allocUnsafe(Math.max(need, this.buffer.length * 2)) : this.buffer;
    unread.copy(target, 0);
    this.buffer = target;
    this.start = 0;
    this.end = unread.length;
  }
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
      maxLogCharsPerCall: number;
      /** The helpers answer itemsSnapshot: membership checks use sets kept in the isolate. */
      snapshots: boolean;
      /** Each call's outcome carries the isolate's used heap (~3 µs a call); else 0. */
      heap: boolean;
      /** UTF-8 bytes of JSON a call may return; 0: no limit. */
      maxResultBytes: number;
    }
  /**
   * Body: the batch's JSON text; empty when `kept` (fast process only): the service keeps the text
   * (a JSON array) and sends it as a "batch" frame if the filter reads it. `parsed`: the guest parses
   * the batch before main instead of on first use (see bootstrap.ts), for a filter that reads its batches.
   */
  | { op: "run"; fid: number; rid: number; meta: string; timeoutMs: number; kept?: boolean; parsed?: boolean }
  /** Body: the kept batch text of call rid (empty and found false when the service no longer has it). */
  | { op: "batch"; rid: number; found: boolean }
  /** Body: the helper's result as JSON (ok) or its error message. */
  | { op: "helped"; rid: number; hid: number; ok: boolean }
  /** The call's time limit passed while it waited for helpers: it fails with TIMEOUT. */
  | { op: "expire"; rid: number }
  | { op: "close"; fid: number };

/** What the sandbox process answers. */
export type FromHost =
  | { op: "ready" }
  | { op: "opened"; fid: number; error: FilterError | null }
  /**
   * Body: the guest's encoded outcome (see bootstrap.ts) when error is null, else empty. The isolate
   * is dropped after any failure, so the next call starts from a fresh one.
   */
  | {
      op: "done";
      rid: number;
      heapBytes: number;
      /** Milliseconds from reading the call's frame to answering it: the call's own duration. */
      ms: number;
      error: FilterError | null;
      /** The call did not run: its filter was not loaded (dropped after an earlier call failed). */
      unloaded?: boolean;
    }
  /**
   * Body: one console line of call rid, sent as it is written, so a call that times out, or whose
   * sandbox process dies, still has the lines it wrote before.
   */
  | { op: "log"; rid: number; level: string }
  /** Body: the arguments as a JSON array. */
  | { op: "helper"; rid: number; hid: number; name: string }
  /** The filter fid reads the batch the service kept for call rid; answered with a "batch" frame. */
  | { op: "need"; fid: number; rid: number }
  /** V8 lost control of an isolate: the process must be replaced. */
  | { op: "fatal"; fid: number | null; message: string };
