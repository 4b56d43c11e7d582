import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";

/**
 * What the stream engines of one service remember about filters that ended an engine's process (see
 * in-thread.ts): the stream whose filter did it, and its account, each for SUSPECT_MS. Their filters run
 * in the sandbox process instead of on the engine's thread, where a crash costs a sandbox restart and
 * pauses the stream, not every stream's delivery for the seconds an engine takes to start. Kept in a file
 * in the data directory, so an engine restarted for any other reason (a SIGKILL, a deploy) still knows:
 * without it, the culprit reactivated, or the same filter in the account's next stream, would end the
 * next engine too.
 */
export const SUSPECT_MS = 24 * 60 * 60_000;

interface SuspectsFile {
  /** Stream id → why its filter ended an engine, until when it is suspect, and that filter's hash. */
  streams: Record<string, { reason: string; until: number; filter: string }>;
  /** Account id → until when its streams' filters are suspect. */
  accounts: Record<string, number>;
}

/** A stream as the suspects know it: its filter's code changes whether it is the culprit still. */
export interface SuspectStream {
  id: string;
  accountId: string;
  filterFunction: string | null;
}

const filterHash = (source: string | null) =>
  createHash("sha256")
    .update(source ?? "")
    .digest("base64url");

/** Why a stream's filter runs in the sandbox process: its own filter ended an engine, or another of its account's. */
export interface Suspicion {
  reason: string;
  /** The stream's own filter ended an engine (it counts as one crash already). */
  culprit: boolean;
}

export class SandboxSuspects {
  private constructor(
    private readonly file: string,
    private readonly known: SuspectsFile,
  ) {}

  /** The suspects remembered in `file` (expired ones dropped; none when it is missing or unreadable). */
  static load(file: string, now = Date.now()): SandboxSuspects {
    let known: SuspectsFile = { streams: {}, accounts: {} };
    try {
      const read = JSON.parse(readFileSync(file, "utf8")) as Partial<SuspectsFile>;
      known = { streams: read.streams ?? {}, accounts: read.accounts ?? {} };
    } catch {
      // Missing (no filter ever ended an engine) or torn: nothing is remembered.
    }
    for (const [id, s] of Object.entries(known.streams)) if (!(s.until > now)) delete known.streams[id];
    for (const [id, until] of Object.entries(known.accounts)) if (!(until > now)) delete known.accounts[id];
    return new SandboxSuspects(file, known);
  }

  /** The stream's filter ended an engine (`reason`: how); its account's filters are suspect too. */
  add(stream: SuspectStream, reason: string, now = Date.now()): void {
    const until = now + SUSPECT_MS;
    this.known.streams[stream.id] = { reason, until, filter: filterHash(stream.filterFunction) };
    this.known.accounts[stream.accountId] = until;
    // Written whole and renamed into place: an engine killed while writing leaves the old file, not half of one.
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.known));
    renameSync(temporary, this.file);
  }

  /** Why this stream's filter must run in the sandbox process, or null when it may run on the engine's thread. */
  of(stream: SuspectStream, now = Date.now()): Suspicion | null {
    const own = this.known.streams[stream.id];
    // A stream whose filter was changed since is no culprit any more (its account stays a suspect).
    if (own && own.until > now && own.filter === filterHash(stream.filterFunction))
      return { reason: own.reason, culprit: true };
    const account = this.known.accounts[stream.accountId];
    if (account !== undefined && account > now)
      return { reason: "another filter of this account ended the engine's process", culprit: false };
    return null;
  }
}
