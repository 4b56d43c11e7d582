import type { StreamFunctions } from "../streams/index.ts";
import {
  checkFunctionCode,
  functionExists,
  functionNames,
  insertFunction,
  runUnsavedCode,
  testResult,
} from "./service.ts";

/** The functions domain's adapter for the streams' port (streams/runtime.ts StreamFunctions). */
export const streamFunctions: StreamFunctions = {
  exists: functionExists,
  names: functionNames,
  checkCode: checkFunctionCode,
  insert: insertFunction,
  async testRun(db, accountId, code, payload, limits, helpers) {
    return testResult(await runUnsavedCode(db, accountId, code, payload, limits, helpers));
  },
};
