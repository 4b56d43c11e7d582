// A process that runs filters on its own thread as the stream engine's does (server/engine.ts), for
// in-thread-memory.test.ts: argv[2] is the lost file, argv[3] the filter's source. It runs a harmless
// call first, says "ready" with its resident memory, then runs the filter once and prints its outcome.
import { readFileSync } from "node:fs";
import { newFilter } from "../../../server/dataplane/sandbox/filter.ts";
import { InThreadSandbox } from "../../../server/dataplane/sandbox/in-thread.ts";
import { runFiltersOn } from "../../../server/dataplane/sandbox/process.ts";

const [lostFile, source] = process.argv.slice(2);
runFiltersOn(
  new InThreadSandbox((message) => {
    process.stdout.write(`lost ${message}\n`);
    process.exit(70);
  }, lostFile),
);
const warm = newFilter({ source: "function main(s) { return s.data.length }", owner: null, label: "stream warm" });
await warm.run({ data: [1] });
const rss = Number(readFileSync("/proc/self/statm", "utf8").split(" ")[1]) * 4096;
process.stdout.write(`ready ${rss}\n`);
const filter = newFilter({ source, owner: null, label: "stream bomb" });
const outcome = await filter.run({ data: [] });
process.stdout.write(`${JSON.stringify(outcome)}\n`);
process.exit(0);
