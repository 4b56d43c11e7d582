/**
 * One service per data directory. The service that owns a data directory (its embedded PostgreSQL server)
 * holds `service.lock` there, naming its process id, its start time and, once listening, its port. The
 * lock is created whole and atomically (written to a file of its own, then hard-linked into place, which
 * fails when one exists), so a second start sees either no lock or a complete one.
 */
import { closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ensureDataDir } from "./config.ts";

interface LockOwner {
  pid: number;
  /** The owner's start time as the kernel counts it (/proc/<pid>/stat), so a reused pid is not taken for it. */
  processStart: string | null;
  port: number | null;
  /** It is closing (it received a stop signal): a start may wait for it to end instead of refusing. */
  stopping: boolean;
}

/** Another live service holds the data directory. */
export class ServiceLockHeld extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner,
  ) {
    const port = owner.stopping ? "stopping" : owner.port === null ? "starting, no port yet" : `port ${owner.port}`;
    super(`Nodeplane is already running on ${dataDir} (pid ${owner.pid}, ${port}); stop it first.`);
    this.name = "ServiceLockHeld";
  }
}

export interface ServiceLock {
  /** Records the port the service listens on, for the message a second start prints. */
  recordPort(port: number): void;
  /** Records that the service is closing, so a start waits for it to end (waitWhileStopping). */
  recordStopping(): void;
  release(): void;
}

const lockFile = (dataDir: string) => path.join(dataDir, "service.lock");

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces), or null off Linux. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists (EPERM: it does, owned by another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the process a lock names still runs: alive, not this process (a restarted container reuses
 * pids), and started when the lock says (a pid reused by another program is not the owner).
 */
function ownerRuns(owner: LockOwner): boolean {
  if (owner.pid === process.pid || !isAlive(owner.pid)) return false;
  const started = processStart(owner.pid);
  return started === null || owner.processStart === null || started === owner.processStart;
}

function parseOwner(text: string): LockOwner | null {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (!Number.isInteger(value.pid) || (value.pid as number) <= 0) return null;
    return {
      pid: value.pid as number,
      processStart: typeof value.processStart === "string" ? value.processStart : null,
      port: Number.isInteger(value.port) ? (value.port as number) : null,
      stopping: value.stopping === true,
    };
  } catch {
    return null;
  }
}

/** The lock as it is now, with its inode (to tell it from one written after it), or null when there is none. */
function readLock(file: string): { owner: LockOwner | null; inode: number } | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    return { inode: fstatSync(fd).ino, owner: parseOwner(readFileSync(fd, "utf8")) };
  } finally {
    closeSync(fd);
  }
}

/** Blocks this thread for a few milliseconds (a start waits for another start's takeover to finish). */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Runs `remove` while holding the takeover mutex (`service.lock.takeover`, created by hard link, so one
 * start holds it). Only the mutex holder removes a stale lock, so no start can remove a lock another start
 * has just taken. A mutex whose holder died (a start killed within its few milliseconds of takeover) is
 * removed; two starts doing that at the same moment is the one race left.
 */
function withTakeoverMutex(file: string, staging: string, remove: () => void) {
  const mutex = `${file}.takeover`;
  for (let waited = 0; ; waited++) {
    try {
      linkSync(staging, mutex);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = readLock(mutex);
    if (holder && !(holder.owner && ownerRuns(holder.owner))) {
      try {
        unlinkSync(mutex);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
      continue;
    }
    if (waited >= 500) throw new Error(`Could not take over ${file}: ${mutex} stays held`);
    pause(10);
  }
  try {
    remove();
  } finally {
    unlinkSync(mutex);
  }
}

/**
 * Takes the data directory's lock, or throws ServiceLockHeld naming the live owner. A lock whose owner no
 * longer runs (a killed service) is removed under the takeover mutex and the lock is taken again.
 */
export function takeServiceLock(dataDir: string): ServiceLock {
  const file = lockFile(dataDir);
  const mine: LockOwner = { pid: process.pid, processStart: processStart(process.pid), port: null, stopping: false };
  // `stopping` is written only once it is true.
  const write = (target: string) => {
    const { stopping, ...owner } = mine;
    writeFileSync(target, `${JSON.stringify(stopping ? mine : owner)}\n`, { mode: 0o644 });
  };
  const staging = `${file}.${process.pid}`;
  ensureDataDir(dataDir);
  write(staging);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(staging, file);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const current = readLock(file);
      if (!current) continue;
      if (current.owner && ownerRuns(current.owner)) throw new ServiceLockHeld(dataDir, current.owner);
      if (attempt >= 5) throw new Error(`Could not take over ${file}: other starts keep changing it`);
      withTakeoverMutex(file, staging, () => {
        // Read again under the mutex: another start may have replaced the stale lock with its own meanwhile.
        const still = readLock(file);
        if (still && !(still.owner && ownerRuns(still.owner))) unlinkSync(file);
      });
    }
  } finally {
    unlinkSync(staging);
  }

  const holds = () => readLock(file)?.owner?.pid === process.pid;
  const record = (change: Partial<LockOwner>) => {
    if (!holds()) throw new Error(`${file} no longer names this process`);
    Object.assign(mine, change);
    write(staging);
    renameSync(staging, file);
  };
  return {
    recordPort(port) {
      record({ port });
    },
    recordStopping() {
      if (holds()) record({ stopping: true });
    },
    release() {
      if (holds()) unlinkSync(file);
    },
  };
}

/**
 * Takes the lock, waiting up to `waitMs` for an owner that is stopping to end (a restart right after a
 * stop: npm returns before the service has closed); an owner that is not stopping is refused at once.
 */
export async function takeServiceLockAfterStopping(dataDir: string, waitMs: number): Promise<ServiceLock> {
  for (const deadline = Date.now() + waitMs; ; ) {
    try {
      return takeServiceLock(dataDir);
    } catch (error) {
      if (!(error instanceof ServiceLockHeld && error.owner.stopping && Date.now() < deadline)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The service's entry points: the sources, and `npm start`'s launcher of its bundle. */
const serviceEntries = ["server/main.ts", "server/start.mjs"];

/** Whether a process runs Nodeplane's service entry point (a PostgreSQL server it started is not left behind). */
export function runsService(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .some((arg) => serviceEntries.some((entry) => arg.endsWith(entry)));
  } catch {
    return false;
  }
}

/** The parent of a process (/proc/<pid>/stat field 4), or null off Linux or when it is gone. */
export function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/**
 * Stops a process a killed service left behind (SIGKILL leaves its children running) so that this start
 * can take over what it holds: sends `signal` and waits up to `waitMs` for it to end, then SIGKILL if
 * `killAfterWait`. A process whose parent is a running service is that service's, whatever the caller's
 * lock says: it is left alone and this throws, naming both. `what` names it in that error; `announce`
 * is called just before the signal.
 */
export async function stopLeftBehind(
  pid: number,
  options: { what: string; signal: NodeJS.Signals; waitMs: number; killAfterWait: boolean; announce(): void },
): Promise<void> {
  if (!isAlive(pid)) return;
  const parent = parentOf(pid);
  if (parent !== null && parent !== process.pid && runsService(parent))
    throw new Error(`${options.what} (pid ${pid}) belongs to a running service (pid ${parent})`);
  options.announce();
  process.kill(pid, options.signal);
  for (let waited = 0; waited < options.waitMs && isAlive(pid); waited += 100)
    await new Promise((resolve) => setTimeout(resolve, 100));
  if (options.killAfterWait && isAlive(pid)) process.kill(pid, "SIGKILL");
}
