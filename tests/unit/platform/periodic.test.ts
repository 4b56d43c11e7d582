import { afterEach, describe, expect, it, vi } from "vitest";
import { runEvery } from "../../../server/platform/periodic.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("runEvery", () => {
  it("runs the task each interval, never two at once, and reports failures without stopping", async () => {
    vi.useFakeTimers();
    let runs = 0;
    let release: () => void = () => {};
    const errors: unknown[] = [];
    const task = vi.fn(async () => {
      runs++;
      if (runs === 2) throw new Error("boom");
      if (runs === 3) await new Promise<void>((resolve) => (release = resolve));
    });
    const periodic = runEvery(1_000, task, (e) => errors.push(e));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(task).toHaveBeenCalledTimes(2);
    expect(errors).toEqual([new Error("boom")]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(task).toHaveBeenCalledTimes(3);
    // The third run is still going: the next ticks start nothing.
    await vi.advanceTimersByTimeAsync(3_000);
    expect(task).toHaveBeenCalledTimes(3);
    release();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(task).toHaveBeenCalledTimes(4);
    await periodic.stop();
  });

  it("stop clears the timer and waits for the run in progress", async () => {
    vi.useFakeTimers();
    let finished = false;
    let release: () => void = () => {};
    const task = vi.fn(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      finished = true;
    });
    const periodic = runEvery(1_000, task, () => {});
    await vi.advanceTimersByTimeAsync(1_000);
    const stopped = periodic.stop().then(() => finished);
    release();
    expect(await stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(task).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
