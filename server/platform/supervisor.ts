import { type ChildProcess, spawn } from "node:child_process";
import type { Logger } from "pino";

/**
 * A child process the service keeps running: started once, restarted when it dies (any end but a clean
 * exit, which is its answer to a SIGTERM; after a back-off that grows while it keeps dying), killed when
 * it stops answering, and never left behind. The child learns that its parent died from its IPC channel
 * closing (`disconnect`, also after a SIGKILL of the parent) and exits then (see answerSupervisor); it
 * says it is alive by a message every ALIVE_EVERY_MS.
 */
export interface SupervisedChild {
  /** The running child's pid (tests kill it to see it restarted). */
  readonly pid: number | undefined;
  /** How many times it was started. */
  readonly starts: number;
  /** Sends a message if the child runs; dropped otherwise (a new child starts from the database). */
  send(message: SupervisorMessage): void;
  /** Stops the child (SIGTERM, then SIGKILL after STOP_GRACE_MS) and does not restart it. */
  stop(): Promise<void>;
}

export type SupervisorMessage = { op: "wake" } | { op: "alive" };

export interface SupervisorOptions {
  name: string;
  /** node's arguments (flags and the entry file). */
  args: string[];
  env: NodeJS.ProcessEnv;
  log: Logger;
}

export const ALIVE_EVERY_MS = 1_000;
/**
 * Set in a restarted child's environment: why its predecessor ended ("exit code 70", "signal SIGKILL",
 * "stuck": killed for silence), so the child can run more carefully for a while.
 */
export const RESTARTED_AFTER_ENV = "NODEPLANE_RESTARTED_AFTER";
/** Silence after which a child is taken as stuck and killed (a call V8 could not stop holds its thread). */
const SILENT_MAX_MS = 15_000;
const FIRST_RESTART_MS = 200;
const LONGEST_RESTART_MS = 10_000;
/** A child that ran this long had a fresh failure: the back-off starts over. */
const STEADY_MS = 30_000;
const STOP_GRACE_MS = 10_000;

export function superviseChild(options: SupervisorOptions): SupervisedChild {
  let child: ChildProcess | null = null;
  let stopping = false;
  let starts = 0;
  let backoffMs = FIRST_RESTART_MS;
  let lastHeard = 0;
  let restartTimer: NodeJS.Timeout | null = null;
  /** Why the last child ended, for the next one (see RESTARTED_AFTER_ENV). */
  let endedBy: string | null = null;
  let killedForSilence = false;
  const log = options.log.child({ component: options.name });

  const start = () => {
    restartTimer = null;
    if (stopping) return;
    starts++;
    const startedAt = Date.now();
    lastHeard = startedAt;
    const started = spawn(process.execPath, options.args, {
      env: endedBy ? { ...options.env, [RESTARTED_AFTER_ENV]: endedBy } : options.env,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    child = started;
    // Any message says the child is alive.
    started.on("message", () => {
      lastHeard = Date.now();
    });
    started.on("error", (error) => log.error({ err: error }, `${options.name} could not be started`));
    started.on("exit", (code, signal) => {
      if (child === started) child = null;
      // Exiting cleanly is the child's answer to a SIGTERM (Ctrl-C or a stop of the service's process group).
      if (stopping || code === 0) return;
      endedBy = killedForSilence ? "stuck" : signal ? `signal ${signal}` : `exit code ${code}`;
      killedForSilence = false;
      if (Date.now() - startedAt > STEADY_MS) backoffMs = FIRST_RESTART_MS;
      log.error({ code, signal, restartInMs: backoffMs }, `${options.name} exited; restarting it`);
      restartTimer = setTimeout(start, backoffMs);
      backoffMs = Math.min(backoffMs * 2, LONGEST_RESTART_MS);
    });
  };
  const watchdog = setInterval(() => {
    if (child && Date.now() - lastHeard > SILENT_MAX_MS) {
      log.error(`${options.name} did not answer for ${SILENT_MAX_MS} ms; killing it`);
      killedForSilence = true;
      child.kill("SIGKILL");
      lastHeard = Date.now();
    }
  }, ALIVE_EVERY_MS);
  watchdog.unref();
  start();

  return {
    get pid() {
      return child?.pid;
    },
    get starts() {
      return starts;
    },
    send(message) {
      if (child?.connected) child.send(message, () => {});
    },
    async stop() {
      stopping = true;
      clearInterval(watchdog);
      if (restartTimer) clearTimeout(restartTimer);
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
      running.kill("SIGTERM");
      const killer = setTimeout(() => running.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * In the child: says it is alive every ALIVE_EVERY_MS, hands the parent's messages to `onMessage`, and
 * calls `gone` when the parent is gone. False when this process is not a supervised child.
 */
export function answerSupervisor(onMessage: (message: SupervisorMessage) => void, gone: () => void): boolean {
  const send = process.send?.bind(process);
  if (!send) return false;
  const alive = setInterval(
    () => send({ op: "alive" } satisfies SupervisorMessage, undefined, {}, () => {}),
    ALIVE_EVERY_MS,
  );
  alive.unref();
  process.on("message", (message: SupervisorMessage) => onMessage(message));
  const parentGone = () => {
    clearInterval(alive);
    gone();
  };
  // A parent killed while this process was still starting closed the channel before anyone listened:
  // its "disconnect" has been emitted already and will not be again.
  if (!process.connected) parentGone();
  else process.once("disconnect", parentGone);
  return true;
}
