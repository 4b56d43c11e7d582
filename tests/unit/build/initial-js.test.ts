// The rule CI's budget check (scripts/initial-js.ts) counts a route's first JavaScript by: the chunks
// its entry modules import statically, not the ones they import lazily.
import { describe, expect, it } from "vitest";
import { type BuildManifest, routeEntries, staticClosure } from "../../../scripts/initial-js.ts";

const manifest: BuildManifest = {
  "index.html": {
    file: "assets/index.js",
    isEntry: true,
    imports: ["_react.js"],
    dynamicImports: ["src/SignedIn.tsx"],
  },
  "_react.js": { file: "assets/react.js" },
  "src/SignedIn.tsx": {
    file: "assets/SignedIn.js",
    imports: ["_react.js", "_button.js"],
    dynamicImports: ["_chart.js"],
  },
  "_button.js": { file: "assets/button.js", imports: ["_react.js"] },
  "_chart.js": { file: "assets/chart.js", imports: ["_echarts.js"] },
  "_echarts.js": { file: "assets/echarts.js" },
};

describe("staticClosure", () => {
  it("follows static imports once each and leaves lazy ones out", () => {
    expect(staticClosure(manifest, ["index.html", "src/SignedIn.tsx"]).sort()).toEqual(
      ["_button.js", "_react.js", "index.html", "src/SignedIn.tsx"].sort(),
    );
  });

  it("fails on an entry the build does not have, rather than counting nothing", () => {
    expect(() => staticClosure(manifest, ["renderer/views/GoneView.tsx"])).toThrow(
      /no chunk for renderer\/views\/GoneView/,
    );
  });
});

describe("routeEntries", () => {
  const screens = [
    { id: "endpoints.list", route: "/endpoints", views: [{ kind: "list" as const }] },
    {
      id: "endpoint.detail",
      route: "/endpoints/:endpointId",
      views: [{ kind: "detail" as const }, { kind: "chart" as const }],
    },
  ];

  it("names the page's entry, the signed-in shell and the matched screen's view kinds", () => {
    expect(routeEntries(screens, "/endpoints")).toEqual([
      "index.html",
      "src/SignedIn.tsx",
      "renderer/views/ListView.tsx",
    ]);
    expect(routeEntries(screens, "/endpoints/abc")).toEqual([
      "index.html",
      "src/SignedIn.tsx",
      "renderer/views/DetailView.tsx",
      "renderer/views/ChartView.tsx",
    ]);
  });

  it("fails on a route no screen answers", () => {
    expect(() => routeEntries(screens, "/nowhere")).toThrow(/no screen answers \/nowhere/);
  });
});
