// The registry this project installs from serves each native package only for the platforms it runs
// on, so `npm install` leaves other platforms' optional binaries out of package-lock.json and then
// `npm ci` refuses the lock file ("Missing: @biomejs/cli-darwin-x64@ from lock file"). This adds
// those entries back, marked optional and limited to their platform, so npm ci skips them here and
// fetches them where they apply. Run it after `npm install` changes the lock file.
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages;

const platformOf = (name) => {
  const os = ["darwin", "linux", "win32", "android", "freebsd"].find((o) => name.includes(o));
  const cpu = ["arm64", "x64", "amd64", "ia32", "arm"].find((c) => name.includes(`-${c}`));
  return {
    ...(os && { os: [os] }),
    ...(cpu && { cpu: [cpu === "amd64" ? "x64" : cpu] }),
    ...(name.includes("musl") && { libc: ["musl"] }),
  };
};

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path}/node_modules/${dep}`;
    const hoisted = `node_modules/${dep}`;
    if (packages[nested] || packages[hoisted]) continue;
    packages[hoisted] = {
      version: range.replace(/^[\^~=]/, ""),
      ...(entry.dev && { dev: true }),
      optional: true,
      ...platformOf(dep),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} optional platform entries`);
