/**
 * The headers the service answers with: the console's security headers and caching, and HSTS when the
 * service is reached over HTTPS. One place, so the static files, the single-page fallback and the API
 * agree.
 */
import { type AppConfig, LOOPBACK_HOSTS } from "./config.ts";

/**
 * The console's Content-Security-Policy. Scripts: our own files only, no inline script, no eval (the
 * forms' validators are compiled by `npm run generate`, not in the browser).
 * Styles: antd's CSS-in-JS writes <style> elements at run time and components set `style` attributes,
 * which a nonce cannot cover; so inline styles are allowed for styles only (docs/decisions/0009-console-delivery-and-headers.md).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * On every console and API response (not the RPC proxy's), as name and value pairs in lower case, as
 * Fastify keeps them: set on each answer without walking an object's keys.
 */
export const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ["content-security-policy", CONSOLE_CSP],
  ["x-content-type-options", "nosniff"],
  ["referrer-policy", "no-referrer"],
  // For browsers without CSP frame-ancestors.
  ["x-frame-options", "DENY"],
  ["cross-origin-opener-policy", "same-origin"],
];

/**
 * HSTS for a year. Without includeSubDomains: the operator's other hosts under the same domain are not
 * this service's to bind to HTTPS.
 */
export const HSTS = "max-age=31536000";

/** Whether users reach the service over HTTPS (PUBLIC_URL says so): cookies are then Secure and HSTS is sent. */
export function servedOverHttps(config: Pick<AppConfig, "publicUrl">): boolean {
  return config.publicUrl?.startsWith("https://") ?? false;
}

/** Built assets carry a content hash in their name (Vite's `assets/`): they never change, so cache them for a year. */
export const IMMUTABLE = "public, max-age=31536000, immutable";
/** Everything else (index.html): the browser revalidates, so a new build is picked up on the next load. */
export const REVALIDATE = "no-cache";

/**
 * The base URL of links users open (console pages, verification links, endpoint URLs): PUBLIC_URL; without
 * it the address this request came to when its host is an allowed one (config.allowedHosts), else the
 * first allowed host. A Host header is the client's to choose: it never decides where a link points.
 */
export function publicBaseUrl(
  config: Pick<AppConfig, "publicUrl" | "allowedHosts">,
  request: { protocol: string; host: string },
): string {
  if (config.publicUrl) return config.publicUrl;
  const host = request.host.toLowerCase();
  const name = host.replace(/:\d+$/, "");
  if (config.allowedHosts.some((allowed) => allowed === host || allowed === name))
    return `${request.protocol}://${host}`;
  const [first] = config.allowedHosts;
  // A loopback name keeps the request's port (development: the service's own); another host is as listed.
  const loopback = LOOPBACK_HOSTS.includes(first);
  const port = loopback ? (/:\d+$/.exec(host)?.[0] ?? "") : "";
  return `${request.protocol}://${first}${port}`;
}

/**
 * The origins publicBaseUrl can answer once the service listens on `port`: PUBLIC_URL's, else each
 * allowed host's (a loopback name with the service's port; another as listed, over http or https, as a
 * proxy in front may reach it). Links the service makes to itself start with one of these.
 */
export function serviceOrigins(config: Pick<AppConfig, "publicUrl" | "allowedHosts">, port: number): string[] {
  if (config.publicUrl) return [new URL(config.publicUrl).origin];
  return config.allowedHosts.flatMap((host) =>
    LOOPBACK_HOSTS.includes(host) ? [`http://${host}:${port}`] : [`http://${host}`, `https://${host}`],
  );
}
