import type { StreamFunctions } from "../streams/index.ts";
import {
  checkFunctionCode,
  type FunctionRuns,
  functionExists,
  functionNames,
  insertFunction,
  runUnsavedCode,
  testResult,
} from "./service.ts";

/** The functions domain's adapter for the streams' port (streams/runtime.ts StreamFunctions), running on `runs`. */
export function streamFunctions(runs: FunctionRuns): StreamFunctions {
  return {
    exists: functionExists,
    names: functionNames,
    checkCode: checkFunctionCode,
    insert: insertFunction,
    async testRun(db, accountId, code, payload, limits, helpers) {
      return testResult(await runUnsavedCode(db, runs, accountId, code, payload, limits, helpers));
    },
  };
}
