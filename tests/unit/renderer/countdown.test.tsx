// @vitest-environment jsdom
import { act, cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Countdown, timeLeft } from "../../../renderer/widgets/countdown.tsx";

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe("the countdown widget", () => {
  it("writes whole seconds left as m:ss, or h:mm:ss from an hour, never below zero", () => {
    expect(timeLeft(59_001)).toBe("1:00");
    expect(timeLeft(61_000)).toBe("1:01");
    expect(timeLeft(3_600_000)).toBe("1:00:00");
    expect(timeLeft(3_725_000)).toBe("1:02:05");
    expect(timeLeft(-5_000)).toBe("0:00");
  });

  it("ticks each second, then says the deadline passed", () => {
    vi.useFakeTimers({ now: new Date("2026-11-29T12:00:00Z") });
    render(<Countdown value="2026-11-29T12:00:02Z" options={{ endedText: "Time is up" }} />);
    expect(screen.getByRole("timer").textContent).toBe("0:02 left");
    act(() => vi.advanceTimersByTime(1000));
    expect(screen.getByRole("timer").textContent).toBe("0:01 left");
    act(() => vi.advanceTimersByTime(1000));
    expect(screen.getByRole("timer").textContent).toBe("Time is up");
  });
});
