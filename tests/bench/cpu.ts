import { readFileSync } from "node:fs";

/** The fields of /proc/<pid>/stat after the command's name (field 3 of stat(5) is the first). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU milliseconds `pid` has used (user and system, /proc/<pid>/stat), 0 once it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const fields = statFields(pid);
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The children of the parent of `pid` (field 4 of stat(5)) at each call; none off Linux. */
export function siblingPids(pid: number): () => number[] {
  try {
    const parent = Number(statFields(pid)[1]);
    return () => readFileSync(`/proc/${parent}/task/${parent}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return () => [];
  }
}
