/**
 * NODEPLANE_TRACE_START=1: a start's steps on standard error, each with the milliseconds since this process
 * began and the CPU time it has used (all its threads), to see which waits of a start are serial and what
 * its thread spends, also on a busy machine (docs/benchmarks.md, the console's restart).
 */
const tracing = process.env.NODEPLANE_TRACE_START === "1";

export function traceStart(step: string): void {
  if (!tracing) return;
  const cpu = process.cpuUsage();
  process.stderr.write(
    `start trace: ${performance.now().toFixed(0)} ms (cpu ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms) ${step}\n`,
  );
}
