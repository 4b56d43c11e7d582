/**
 * A task run every `everyMs` for as long as the service runs (housekeeping: sweeps and prunes). A run
 * never starts while the one before is still going; a failure is reported and the next run comes as
 * usual. The timer does not keep the process alive, and stop() clears it and waits for a run in progress,
 * so a closing service ends no task halfway through its database work.
 */
/** How often the API's housekeeping runs (each pass reads an index and finds nothing, mostly). */
export const HOUSEKEEPING_EVERY_MS = 10 * 60_000;

export interface Periodic {
  stop(): Promise<void>;
}

export function runEvery(everyMs: number, task: () => Promise<unknown>, onError: (error: unknown) => void): Periodic {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = task()
      .then(
        () => undefined,
        (error: unknown) => onError(error),
      )
      .finally(() => {
        running = null;
      });
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
