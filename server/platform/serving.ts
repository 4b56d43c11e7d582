/**
 * The services running from this checkout, whatever their data directories: each serves the console from
 * the checkout's `dist/` and runs its engine from `dist-server/`, which a start with changed sources would
 * rebuild under them (the data directory's lock does not cover them: two services with two data
 * directories share one checkout). Each running service keeps a file here while it runs; a start that
 * would rebuild asks first.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SERVER_BUILD_DIR } from "./server-build.mjs";
import { runsService } from "./service-lock.ts";

export interface ServingEntry {
  pid: number;
  port: number | null;
  dataDir: string;
}

const servingDir = (rootDir: string) => path.join(rootDir, SERVER_BUILD_DIR, "serving");

/** The other services running from this checkout (an entry whose process no longer runs is removed). */
export function othersServing(rootDir: string): ServingEntry[] {
  const dir = servingDir(rootDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
  const live: ServingEntry[] = [];
  for (const name of names) {
    let entry: ServingEntry;
    try {
      entry = JSON.parse(readFileSync(path.join(dir, name), "utf8")) as ServingEntry;
    } catch {
      continue;
    }
    if (entry.pid === process.pid) continue;
    if (runsService(entry.pid)) live.push(entry);
    else rmSync(path.join(dir, name), { force: true });
  }
  return live;
}

/** Records this service as serving from the checkout until release() (or the process's exit). */
export function registerServing(rootDir: string, dataDir: string) {
  const dir = servingDir(rootDir);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${process.pid}.json`);
  const entry: ServingEntry = { pid: process.pid, port: null, dataDir };
  const write = () => {
    writeFileSync(`${file}.tmp`, JSON.stringify(entry));
    renameSync(`${file}.tmp`, file);
  };
  write();
  const release = () => rmSync(file, { force: true });
  process.on("exit", release);
  return {
    recordPort(port: number) {
      entry.port = port;
      write();
    },
    release,
  };
}
