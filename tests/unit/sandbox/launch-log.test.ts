// The service tries how sandbox processes can be confined at its start, without holding up its thread.
import { describe, expect, it } from "vitest";
import { logSandboxLaunch, sandboxLaunch } from "../../../server/dataplane/sandbox/confine.ts";

describe("the sandbox launch at start", () => {
  it("is tried by processes this thread does not wait for, and logged as sandboxes then use it", async () => {
    const lines: { how: unknown; message: string }[] = [];
    const record = (how: unknown, message: string) => lines.push({ how, message });
    let turns = 0;
    const timer = setInterval(() => turns++, 1);
    try {
      await logSandboxLaunch({ info: record, warn: record } as unknown as Parameters<typeof logSandboxLaunch>[0]);
    } finally {
      clearInterval(timer);
    }
    // The thread ran other work while the probes (a Node process each, loading isolated-vm) ran.
    expect(turns).toBeGreaterThan(0);
    const launch = sandboxLaunch();
    expect(lines[0]).toEqual({
      how: { user: launch.user?.name ?? "the service's", isolatedNetwork: launch.isolatedNetwork },
      message: launch.shortfall ? `sandbox processes run ${launch.shortfall}` : "sandbox processes run confined",
    });
  });
});
