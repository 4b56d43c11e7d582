import { describe, expect, it } from "vitest";
import { PLAN_FUNCTION_LIMITS, RUN_QUEUE, RunCapacity } from "../../../server/domains/functions/limits.ts";
import { AppError } from "../../../server/platform/errors.ts";

// The runtime's capacity shared by plan (schemas/catalogue/function-limits.json): what any number of free
// accounts can take, and what a run past it gets.

const free = PLAN_FUNCTION_LIMITS.b6_free;
const build = PLAN_FUNCTION_LIMITS.b6_build;
/** One process's capacity, as the composition makes it. */
const capacity = new RunCapacity();
const admitRun = capacity.admit.bind(capacity);

/** Whether a promise has settled by the next turn of the event loop (admission answers at once when it can). */
async function settledNow<T>(promise: Promise<T>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** Free accounts, each running its plan's share at once, until the free pool is full; their releases. */
async function fillFreePool(tag: string): Promise<(() => void)[]> {
  const releases: (() => void)[] = [];
  const perAccount = Math.min(free.runningRuns, Math.floor(free.runningMemoryMb / 128));
  for (let a = 0; releases.length < (free.poolRuns ?? 0); a++)
    for (let r = 0; r < perAccount && releases.length < (free.poolRuns ?? 0); r++)
      releases.push(await admitRun(`${tag}-free-${a}`, free, 128));
  return releases;
}

describe("function capacity shared by plan", () => {
  it("free accounts saturating their pool make a paying account's run neither wait nor fail; theirs wait", async () => {
    const running = await fillFreePool("saturate");
    // Many more free accounts ask: they wait for the free pool (each with a short wait here).
    const waiting = Array.from({ length: 30 }, (_, i) => admitRun(`saturate-more-${i}`, free, 128, 200));
    for (const w of waiting) w.catch(() => undefined);
    expect(await settledNow(waiting[0])).toBe(false);
    // Before: admitted while the runtime's 12 GiB had room, whoever took it; 24 free accounts took it all.
    const paying = admitRun("saturate-paying", build, 512, 1);
    expect(await settledNow(paying)).toBe(true);
    const release = await paying;
    release();
    // A free run ending lets the oldest waiting one start.
    running[0]();
    expect(await settledNow(waiting[0])).toBe(true);
    for (const r of running.slice(1)) r();
    // Each waiting run ends as soon as it starts, letting the next one start.
    await Promise.all(
      waiting.map((w) =>
        w.then(
          (end) => end(),
          () => undefined,
        ),
      ),
    );
  });

  it("a run still waiting when its wait ends is refused with RATE_LIMITED saying so; nothing ran", async () => {
    const running = await fillFreePool("timeout");
    const started = Date.now();
    const refused = await admitRun("timeout-late", free, 128, 100).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe("RATE_LIMITED");
    expect((refused as AppError).message).toBe(
      "The functions runtime stayed full for the 0.1 s this run waited for it; nothing ran. Try again in a moment.",
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    // Its place in its account's share was given back: the account can run once the pool has room.
    for (const r of running) r();
    (await admitRun("timeout-late", free, 128, 100))();
  });

  it("the queue is bounded: a run past its places is refused at once with RATE_LIMITED", async () => {
    const running = await fillFreePool("bounded");
    const waiting = Array.from({ length: RUN_QUEUE.total }, (_, i) =>
      admitRun(`bounded-waiter-${Math.floor(i / free.runningRuns)}`, free, 128, 300),
    );
    for (const w of waiting) w.catch(() => undefined);
    expect(await settledNow(waiting[0])).toBe(false);
    const refusedNow = admitRun("bounded-one-more", free, 128, 5_000).then(
      () => null,
      (e: unknown) => e as AppError,
    );
    expect(await settledNow(refusedNow)).toBe(true);
    expect((await refusedNow)?.code).toBe("RATE_LIMITED");
    expect((await refusedNow)?.message).toMatch(
      /^The functions runtime is running all it holds for this plan, and 256 runs wait for it/,
    );
    await Promise.allSettled(waiting);
    for (const r of running) r();
    await Promise.all(
      waiting.map((w) =>
        w.then(
          (end) => end(),
          () => undefined,
        ),
      ),
    );
  });

  it("one account's runs at once stop at its plan's runningRuns (its share of the cores), refused at once", async () => {
    const releases = [];
    for (let i = 0; i < build.runningRuns; i++) releases.push(await admitRun("cores-build", build, 128));
    const refused = await admitRun("cores-build", build, 128).then(
      () => null,
      (e: unknown) => e as AppError,
    );
    expect(refused?.message).toBe(
      `This account is running ${build.runningRuns} functions at once and its plan allows ${build.runningRuns}. Try again when a run ends, or upgrade your plan.`,
    );
    for (const r of releases) r();
  });
});
