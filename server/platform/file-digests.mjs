/**
 * The SHA-256 of each of a checkout's files, read again only when the file changed. A start hashes the
 * inputs of the console build, of the service's bundle, of the checks that passed and of the registry's
 * snapshot (~1,000 files, ~0.3 s of a restart's CPU when each read them all); the digests are kept beside
 * the service's bundle (`dist-server/.file-digests.json`) with each file's size, modification and change
 * times and inode, and a file whose stat is unchanged is not read again. Plain JavaScript: `server/start.mjs`
 * uses it before anything can compile TypeScript.
 *
 * A digest is kept only for a file whose last change is older than a second when it is read: a change made
 * within the file system's timestamp granularity after that read could otherwise leave the same stat (git's
 * "racily clean" entries). A copy or a restore gets a new change time and inode, so it is read again.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Beside the service's bundle (server-build.mjs's SERVER_BUILD_DIR), which it is removed with. */
const RECORD = path.join("dist-server", ".file-digests.json");
const SETTLED_NS = 1_000_000_000n;

/** @typedef {[stat: string, sha256: string]} Entry */

/** Each checkout's digests, loaded once per process: the record as read, with what this process added. */
/** @type {Map<string, Map<string, Entry>>} */
const records = new Map();

/** @param {string} rootDir @returns {Map<string, Entry>} */
function recordOf(rootDir) {
  let record = records.get(rootDir);
  if (!record) {
    try {
      record = new Map(Object.entries(JSON.parse(readFileSync(path.join(rootDir, RECORD), "utf8"))));
    } catch {
      record = new Map();
    }
    records.set(rootDir, record);
  }
  return record;
}

/** @param {Uint8Array | string} contents */
export const contentsDigest = (contents) => createHash("sha256").update(contents).digest("hex");

/**
 * The digest of each of `files` (paths relative to `rootDir`), in their order; throws when one is gone.
 * @param {string} rootDir @param {string[]} files
 * @returns {string[]}
 */
export function fileDigests(rootDir, files) {
  const record = recordOf(rootDir);
  let added = false;
  const digests = files.map((file) => {
    const now = BigInt(Date.now()) * 1_000_000n;
    const stat = statSync(path.join(rootDir, file), { bigint: true });
    const key = `${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.ino}`;
    const kept = record.get(file);
    if (kept?.[0] === key) return kept[1];
    const digest = contentsDigest(readFileSync(path.join(rootDir, file)));
    if (stat.ctimeNs < now - SETTLED_NS) {
      record.set(file, [key, digest]);
      added = true;
    }
    return digest;
  });
  if (added) save(rootDir, record);
  return digests;
}

/**
 * Written whole (a rename); two processes writing at once may drop the other's additions, which are then
 * read again. A checkout that cannot be written keeps nothing.
 * @param {string} rootDir @param {Map<string, Entry>} record
 */
function save(rootDir, record) {
  const file = path.join(rootDir, RECORD);
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const staging = `${file}.${process.pid}`;
    writeFileSync(staging, JSON.stringify(Object.fromEntries(record)));
    renameSync(staging, file);
  } catch {
    // Read again at the next start.
  }
}
