// What a signed-in page's document names as preloads (server/platform/console-preload.ts): the screen at
// its address ranked as the console's router ranks routes, and the static closure of the signed-in shell
// and that screen's views, without what the entry already names.
import { describe, expect, it } from "vitest";
import {
  type BuildManifest,
  screenAt,
  signedInPreloads,
  withModulePreloads,
} from "../../../server/platform/console-preload.ts";

const screens = [
  { id: "endpoints.list", route: "/endpoints", views: [{ kind: "list" }] },
  { id: "endpoints.new", route: "/endpoints/new", views: [{ kind: "form" }] },
  { id: "endpoint.detail", route: "/endpoints/:endpointId", views: [{ kind: "detail" }, { kind: "chart" }] },
];

const manifest: BuildManifest = {
  "index.html": {
    file: "assets/index.js",
    isEntry: true,
    imports: ["_react.js"],
    dynamicImports: ["src/SignedIn.tsx"],
  },
  "_react.js": { file: "assets/react.js" },
  "src/SignedIn.tsx": { file: "assets/SignedIn.js", imports: ["_react.js", "_button.js"] },
  "_button.js": { file: "assets/button.js", imports: ["_react.js"] },
  "renderer/views/ListView.tsx": { file: "assets/ListView.js", imports: ["_button.js"], dynamicImports: ["_bulk.js"] },
  "_bulk.js": { file: "assets/bulk.js" },
  "renderer/views/FormView.tsx": { file: "assets/FormView.js" },
  "renderer/views/DetailView.tsx": { file: "assets/DetailView.js" },
  "renderer/views/ChartView.tsx": { file: "assets/ChartView.js" },
};

describe("screenAt", () => {
  it("ranks a static segment above a parameter, whatever the order of the screens", () => {
    expect(screenAt(screens, "/endpoints/new")?.id).toBe("endpoints.new");
    expect(screenAt([...screens].reverse(), "/endpoints/new")?.id).toBe("endpoints.new");
    expect(screenAt(screens, "/endpoints/abc")?.id).toBe("endpoint.detail");
    expect(screenAt(screens, "/endpoints/")?.id).toBe("endpoints.list");
    expect(screenAt(screens, "/endpoints/abc/more")).toBeUndefined();
  });
});

describe("signedInPreloads", () => {
  it("names the shell's and the views' static closure, without the entry's chunks or lazy ones", () => {
    expect(signedInPreloads(manifest, screens, "/endpoints")).toEqual([
      "assets/SignedIn.js",
      "assets/button.js",
      "assets/ListView.js",
    ]);
    expect(signedInPreloads(manifest, screens, "/endpoints/abc")).toEqual([
      "assets/SignedIn.js",
      "assets/button.js",
      "assets/DetailView.js",
      "assets/ChartView.js",
    ]);
  });

  it("names the shell alone where no screen answers (the console shows its not-found page)", () => {
    expect(signedInPreloads(manifest, screens, "/nowhere")).toEqual(["assets/SignedIn.js", "assets/button.js"]);
  });
});

describe("withModulePreloads", () => {
  it("adds one link per file at the end of the head, and leaves a page without files as it is", () => {
    const html = "<html><head><title>x</title></head><body></body></html>";
    expect(withModulePreloads(html, ["assets/a.js", "assets/b.js"])).toBe(
      '<html><head><title>x</title><link rel="modulepreload" crossorigin href="/assets/a.js"><link rel="modulepreload" crossorigin href="/assets/b.js"></head><body></body></html>',
    );
    expect(withModulePreloads(html, [])).toBe(html);
  });
});
