import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Logger } from "pino";
import { sandboxHostLaunch } from "../../platform/server-build.mjs";
import { MEMORY_OVERHEAD_MIB, ROOT_DIR } from "./process.ts";

/**
 * What a sandbox process runs as. It runs tenants' code, and code that got out of V8 would have the
 * process's user and network: the service's files (the data directory's keys, its database) and every
 * address the egress policy refuses to webhooks. So, where the machine allows it, the process is started
 * - without a network: `unshare --net` gives it a network namespace of its own with no interface up
 *   (it talks to the service over the pipe it inherits, which needs none);
 * - as `nobody`, when the service runs as root (`setpriv`, no supplementary groups, no new privileges),
 *   so the service's files are out of its reach (the data directory lists nothing to others, its secrets
 *   are 0600 and tenants' upload parts 0700, see ensureDataDir);
 *   a service that does not run as root has no other user to give it, and its files stay readable.
 * Which one the machine allows is tried once, by starting Node confined, loading isolated-vm and
 * reading what the sandbox process starts from (its bundle, or its source and the TypeScript loader): a clone in a directory `nobody`
 * cannot read (root's home) starts the sandbox as the service's user instead, and the log says why.
 */
export interface SandboxLaunch {
  /** The command and its arguments before Node's (none: Node itself). */
  prefix: string[];
  /** The user the sandbox process runs as, when not the service's. */
  user: { name: string; uid: number; gid: number } | null;
  /** It has a network namespace of its own, with no interface up. */
  isolatedNetwork: boolean;
  /** What it could not be confined by, and why; null when fully confined. */
  shortfall: string | null;
}

const requireHere = createRequire(import.meta.url);
/** Loads isolated-vm and reads what the sandbox process starts from: a confined process that can, can start it. */
const probe = () => `const fs = require("node:fs");
require(${JSON.stringify(requireHere.resolve("isolated-vm"))});
for (const file of ${JSON.stringify(sandboxHostLaunch(ROOT_DIR).reads)}) fs.accessSync(file, fs.constants.R_OK);`;

/** The `nobody` user of /etc/passwd (65534 where it is not listed). */
function nobody(): { name: string; uid: number; gid: number } {
  try {
    const line = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((l) => l.startsWith("nobody:"));
    const [, , uid, gid] = line?.split(":") ?? [];
    if (uid && gid) return { name: "nobody", uid: Number(uid), gid: Number(gid) };
  } catch {
    // No /etc/passwd: the conventional ids below.
  }
  return { name: "nobody", uid: 65534, gid: 65534 };
}

/** The launches to try, most confined first. */
function candidates(): SandboxLaunch[] {
  const noNetwork = ["unshare", "--net", "--"];
  if (process.getuid?.() !== 0)
    return [{ prefix: ["unshare", "--user", "--net", "--"], user: null, isolatedNetwork: true, shortfall: null }];
  const user = nobody();
  const asUser = ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--no-new-privs", "--"];
  return [
    { prefix: [...noNetwork, ...asUser], user, isolatedNetwork: true, shortfall: null },
    { prefix: asUser, user, isolatedNetwork: false, shortfall: null },
    { prefix: noNetwork, user: null, isolatedNetwork: true, shortfall: null },
  ];
}

const probeArgs = (launch: SandboxLaunch) => [...launch.prefix.slice(1), process.execPath, "-e", probe()];
const UNCONFINED: SandboxLaunch = { prefix: [], user: null, isolatedNetwork: false, shortfall: null };
/** How a probe ended: spawnSync's answer, or the same read from a probe run in the background. */
interface ProbeResult {
  error?: Error;
  stderr: string;
  status: number | null;
}
/** What failed of a probe, in a line. */
const failure = (r: ProbeResult) =>
  r.error?.message ??
  (r.stderr
    .split("\n")
    .find((l) => /Error|denied|not permitted|EACCES/.test(l))
    ?.trim() ||
    `exited with code ${r.status}`);

const failureOrNull = (r: ProbeResult) => (r.status === 0 ? null : failure(r));

/** The first launch that starts, with what the ones before it lacked; unconfined when none does. */
function choose(tried: { launch: SandboxLaunch; failed: string | null }[]): SandboxLaunch {
  const ok = tried.find((t) => t.failed === null);
  const missing = [...new Set(tried.filter((t) => t.failed !== null).map((t) => t.failed))].join("; ");
  const chosen = ok?.launch ?? UNCONFINED;
  const wanted = candidates()[0];
  const lacks = [
    wanted.isolatedNetwork && !chosen.isolatedNetwork ? "its own network" : null,
    wanted.user && !chosen.user ? `the user ${wanted.user.name}` : null,
  ].filter((x) => x !== null);
  return lacks.length > 0 ? { ...chosen, shortfall: `without ${lacks.join(" and ")}: ${missing}` } : chosen;
}

let decided: SandboxLaunch | null = null;

/** How sandbox processes are started: the launches are tried once, on first use (about 0.1 s). */
export function sandboxLaunch(): SandboxLaunch {
  if (decided) return decided;
  const tried = [];
  for (const launch of candidates()) {
    const failed = failureOrNull(spawnSync(launch.prefix[0], probeArgs(launch), { encoding: "utf8", timeout: 30_000 }));
    tried.push({ launch, failed });
    if (failed === null) break;
  }
  decided = choose(tried);
  return decided;
}

/**
 * Why a cgroup v2 memory.max per sandbox process is not what bounds it on this machine. The kernel would
 * then end a process at its limit; the service does not create cgroups (a machine whose cgroup v2
 * hierarchy has the memory controller would have to delegate it a subtree), so the watchdog on resident
 * memory bounds it everywhere (see MEMORY_OVERHEAD_MIB and docs/decisions/0700-sandbox-memory-budget.md).
 */
function cgroupMemory(): string {
  try {
    const controllers = readFileSync("/sys/fs/cgroup/cgroup.controllers", "utf8");
    return controllers.split(/\s+/).includes("memory")
      ? "cgroup v2 has the memory controller, but no subtree is delegated to the service"
      : "cgroup v2 is mounted without the memory controller";
  } catch {
    return "no cgroup v2 hierarchy with a memory controller (cgroup v1 or none)";
  }
}

/** A probe started without waiting for it: the service goes on starting while it runs. */
function probeInBackground(launch: SandboxLaunch): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const child = spawn(launch.prefix[0], probeArgs(launch), { stdio: ["ignore", "ignore", "pipe"], timeout: 30_000 });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    child.once("error", (error) => resolve({ error, stderr, status: null }));
    child.once("close", (status) => resolve({ stderr, status }));
  });
}

/**
 * Decides the launch at the service's start, not at its first filter or function, and logs how sandboxes
 * run. The probes run as processes this thread does not wait for (a start answers sooner); a sandbox
 * wanted before they end decides it by itself (sandboxLaunch), the same way.
 */
export async function logSandboxLaunch(log: Pick<Logger, "info" | "warn">): Promise<void> {
  if (!decided) {
    const tried = [];
    for (const launch of candidates()) {
      const failed = failureOrNull(await probeInBackground(launch));
      tried.push({ launch, failed });
      if (failed === null) break;
    }
    decided ??= choose(tried);
  }
  const { user, isolatedNetwork, shortfall } = decided;
  const how = { user: user?.name ?? "the service's", isolatedNetwork };
  if (shortfall) log.warn(how, `sandbox processes run ${shortfall}`);
  else log.info(how, "sandbox processes run confined");
  log.info(
    { memoryOverheadMiB: MEMORY_OVERHEAD_MIB, cgroup: cgroupMemory() },
    `sandbox memory: each sandbox process's resident memory is held to its isolates' limits plus ${MEMORY_OVERHEAD_MIB} MiB by a watchdog that kills it past them (RLIMIT_AS cannot: V8 reserves ~0.5 GB of address space per isolate)`,
  );
}
