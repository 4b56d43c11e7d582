// Which unknown GET paths are the console's own routes (answered with the single-page app) and which
// are missing files or unknown API paths (a 404). A console route may end in what looks like a file
// extension (a key-value key such as /kv/values/threshold.eth), so an extension alone does not make a
// file: the build's files are at the top level (index.html) or under /assets/.

/** Paths the service answers itself: never the console, even when unknown. */
export const API_PREFIXES = ["/graphql", "/rpc", "/healthz", "/kv-uploads", "/inspect/", "/rest/"];

export function isConsoleRoute(method: string, url: string): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  const pathname = url.split("?")[0] ?? "";
  if (API_PREFIXES.some((prefix) => pathname.startsWith(prefix))) return false;
  if (pathname.startsWith("/assets/")) return false;
  const segments = pathname.split("/").filter(Boolean);
  const topLevelFile = segments.length === 1 && segments[0]?.includes(".");
  return !topLevelFile;
}
