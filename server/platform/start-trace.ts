/**
 * NODEPLANE_TRACE_START=1: a start's steps on standard error, each with the milliseconds since this process
 * began, to see which waits of a start are serial (docs/benchmarks.md, the console's restart).
 */
const tracing = process.env.NODEPLANE_TRACE_START === "1";

export function traceStart(step: string): void {
  if (tracing) process.stderr.write(`start trace: ${performance.now().toFixed(0)} ms ${step}\n`);
}
