/** The part of async-exit-hook (no types of its own) the embedded server's shutdown uses (see postgres.ts). */
declare module "async-exit-hook" {
  interface ExitHook {
    (hook: (done: () => void) => void): void;
    /** Stops running the hooks (and exiting) on this process event. */
    unhookEvent(event: string): void;
  }
  const exitHook: ExitHook;
  export default exitHook;
}
