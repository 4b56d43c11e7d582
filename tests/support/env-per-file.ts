/**
 * The API suite runs its files one after another in the same workers (isolate: false, see
 * vitest.config.ts): what a file sets in process.env (the chain nodes a service reads from there) is
 * put back when it ends, so the next file starts from the environment the run began with.
 */
import { afterAll } from "vitest";

const atStart = { ...process.env };

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in atStart)) delete process.env[name];
  Object.assign(process.env, atStart);
});
