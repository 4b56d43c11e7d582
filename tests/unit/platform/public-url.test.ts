import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../server/platform/config.ts";
import { publicBaseUrl } from "../../../server/platform/http-headers.ts";

const http = (host: string) => ({ protocol: "http", host });

describe("links users open", () => {
  it("come from PUBLIC_URL whatever the Host header says", () => {
    const config = loadConfig({ PUBLIC_URL: "https://console.example.com/" });
    expect(publicBaseUrl(config, http("attacker.example"))).toBe("https://console.example.com");
  });

  it("in development follow a loopback Host, and a forged one gets the loopback name on the service's port", () => {
    const config = loadConfig({});
    expect(publicBaseUrl(config, http("127.0.0.1:8080"))).toBe("http://127.0.0.1:8080");
    expect(publicBaseUrl(config, http("localhost:5173"))).toBe("http://localhost:5173");
    expect(publicBaseUrl(config, http("attacker.example:8080"))).toBe("http://localhost:8080");
    expect(publicBaseUrl(config, http("attacker.example"))).toBe("http://localhost");
  });

  it("follow only the allowed hosts named, and the first of them otherwise", () => {
    const config = loadConfig({ NODEPLANE_ALLOWED_HOSTS: "console.example.com, console.example.net:8443" });
    expect(publicBaseUrl(config, http("console.example.com:8080"))).toBe("http://console.example.com:8080");
    expect(publicBaseUrl(config, http("CONSOLE.example.net:8443"))).toBe("http://console.example.net:8443");
    expect(publicBaseUrl(config, http("console.example.net:9999"))).toBe("http://console.example.com");
    expect(publicBaseUrl(config, http("localhost:8080"))).toBe("http://console.example.com");
  });

  it("in production need PUBLIC_URL or allowed hosts: the service will not start without either", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(/PUBLIC_URL/);
    expect(loadConfig({ NODE_ENV: "production", PUBLIC_URL: "https://c.example.com" }).publicUrl).toBe(
      "https://c.example.com",
    );
    expect(loadConfig({ NODE_ENV: "production", NODEPLANE_ALLOWED_HOSTS: "c.example.com" }).allowedHosts).toEqual([
      "c.example.com",
    ]);
    expect(() => loadConfig({ NODEPLANE_ALLOWED_HOSTS: "https://c.example.com" })).toThrow(/NODEPLANE_ALLOWED_HOSTS/);
  });
});
