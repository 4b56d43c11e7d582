import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadApiSchema } from "../../server/graphql/schema.ts";
import { loadRegistry, RegistryError, registryFor } from "../../server/registry/registry.ts";

const rootDir = path.resolve(import.meta.dirname, "../..");
const apiSchema = loadApiSchema();

describe("the screen registry", () => {
  it("loads: every manifest, operation and form schema is valid and every screen is reachable", () => {
    let problems: string[] = [];
    try {
      loadRegistry(rootDir, apiSchema);
    } catch (error) {
      if (!(error instanceof RegistryError)) throw error;
      problems = error.problems.map((p) => `${p.file} ${p.pointer}: ${p.reason}`);
    }
    expect(problems).toEqual([]);
  });

  it("has screens, each naming only operations it defines", () => {
    const registry = loadRegistry(rootDir, apiSchema);
    expect(registry.screens.length).toBeGreaterThan(3);
    for (const screen of registry.screens) {
      for (const name of screen.operations) expect(registry.operations.has(name), `${screen.file}: ${name}`).toBe(true);
    }
  });

  it("serves a viewer only the screens its role and flags allow", () => {
    const registry = loadRegistry(rootDir, apiSchema);
    const owner = registryFor(registry, "OWNER", { endpointTags: true });
    const viewer = registryFor(registry, "VIEWER", {});
    expect(viewer.screens.length).toBeLessThanOrEqual(owner.screens.length);
    for (const screen of viewer.screens) {
      expect(["VIEWER", undefined]).toContain((screen.requires as { role?: string } | undefined)?.role);
      expect((screen.requires as { flag?: string | null } | undefined)?.flag ?? null).toBeNull();
    }
    for (const screen of owner.screens) {
      const names = JSON.stringify(screen).match(/"(query|mutation)":"([A-Za-z]+)"/g) ?? [];
      for (const match of names) expect(owner.operations[match.split(":")[1].replaceAll('"', "")]).toBeTruthy();
    }
  });

  it("names the screens a role does not open, with the role they need and nothing of their content", () => {
    const registry = loadRegistry(rootDir, apiSchema);
    const viewer = registryFor(registry, "VIEWER", {});
    const create = viewer.locked.find((screen) => screen.route === "/endpoints/new");
    expect(create).toEqual({
      id: "endpoints.create",
      route: "/endpoints/new",
      title: expect.any(String),
      requires: { role: "ADMIN" },
    });
    expect(viewer.screens.some((screen) => screen.id === "endpoints.create")).toBe(false);
    expect(registryFor(registry, "OWNER", {}).locked).toEqual([]);
    // A screen behind a flag that is off is neither served nor named.
    const flagged = registry.screens.find(({ manifest }) => manifest.requires?.flag);
    if (flagged) expect(viewer.locked.some((screen) => screen.id === flagged.manifest.id)).toBe(false);
  });
});

describe("the registry loader refuses a broken registry", () => {
  let dir: string | null = null;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  /** A copy of the declarations with one screen of our own, to break on purpose. */
  function withScreen(manifest: Record<string, unknown>, document: string) {
    dir = mkdtempSync(path.join(tmpdir(), "registry-"));
    cpSync(path.join(rootDir, "schemas"), path.join(dir, "schemas"), { recursive: true });
    cpSync(path.join(rootDir, "screens"), path.join(dir, "screens"), { recursive: true });
    writeFileSync(path.join(dir, "screens/broken.graphql"), document);
    writeFileSync(path.join(dir, "screens/broken.screen.json"), JSON.stringify(manifest));
    try {
      loadRegistry(dir, apiSchema);
    } catch (error) {
      if (error instanceof RegistryError) return error.problems.filter((p) => p.file.includes("broken"));
      throw error;
    }
    return [];
  }

  const base = {
    version: 1,
    id: "broken.screen",
    route: "/broken",
    title: "Broken",
    nav: { section: "Test", label: "Broken" },
  };

  it("names the file, pointer and reason of a manifest that breaks the meta-schema", () => {
    const problems = withScreen(
      { ...base, views: [{ kind: "list", query: "BrokenList" }] },
      "query BrokenList { tags { id } }",
    );
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatchObject({
      file: "screens/broken.screen.json",
      pointer: expect.stringMatching(/^\/views\/0/),
    });
  });

  it("refuses an operation that does not exist or does not fit the API", () => {
    const unknownOp = withScreen(
      { ...base, views: [{ kind: "list", query: "Nowhere", rows: "tags", columns: [{ field: "/label" }] }] },
      "query BrokenList { tags { id } }",
    );
    expect(unknownOp.map((p) => p.reason).join()).toMatch(/Nowhere/);
    const badField = withScreen(
      { ...base, views: [{ kind: "list", query: "BrokenList", rows: "tags", columns: [{ field: "/label" }] }] },
      "query BrokenList { tags { nope } }",
    );
    expect(badField.map((p) => p.reason).join()).toMatch(/Cannot query field "nope"/);
  });

  it("refuses a form whose schema does not fit its mutation's input", () => {
    const problems = withScreen(
      {
        ...base,
        views: [{ kind: "form", mutation: "BrokenCreate", schema: "endpoint#/$defs/labelInput" }],
      },
      "mutation BrokenCreate($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }",
    );
    const reasons = problems.map((p) => p.reason).join("\n");
    expect(reasons).toMatch(/chain is required but the schema does not require it/);
  });

  it("refuses an unknown widget, view kind, icon or action, naming its pointer and the known names", () => {
    const problems = withScreen(
      {
        ...base,
        views: [
          {
            kind: "list",
            query: "BrokenList",
            rows: "tags",
            columns: [{ field: "/label", widget: "sparkline" }],
            rowActions: [{ label: "Nothing", icon: "sparkles" }],
          },
          { kind: "graph", query: "BrokenList" },
          { kind: "custom", widget: "nowhere" },
          { kind: "form", mutation: "BrokenCreate", schema: "endpoint", uiSchema: { label: { "ui:widget": "dial" } } },
        ],
      },
      "query BrokenList { tags { id label } }",
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          pointer: "/views/0/columns/0/widget",
          reason: expect.stringMatching(/^"sparkline" is not one of: text, status, .*json/),
        }),
        expect.objectContaining({
          pointer: "/views/0/rowActions/0/icon",
          reason: expect.stringMatching(/^"sparkles" is not one of: .*archive/),
        }),
        expect.objectContaining({
          pointer: "/views/1/kind",
          reason: expect.stringMatching(/"graph" is not one of: list,/),
        }),
        expect.objectContaining({
          pointer: "/views/2/widget",
          reason: expect.stringMatching(/"nowhere" is not one of: .*runner/),
        }),
        expect.objectContaining({
          pointer: "/views/3/uiSchema/label/ui:widget",
          reason: expect.stringMatching(/"dial" is not one of: .*remote-options.*password/),
        }),
      ]),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: "/views/0/rowActions/0", reason: "must have required property 'mutation'" }),
      ]),
    );
    expect(problems.every((p) => p.file === "screens/broken.screen.json")).toBe(true);
    const unknownAction = withScreen(
      {
        ...base,
        views: [
          {
            kind: "list",
            query: "BrokenList",
            rows: "tags",
            columns: [{ field: "/label" }],
            rowActions: [{ label: "Poke", mutation: "PokeTag" }],
          },
        ],
      },
      "query BrokenList { tags { id label } }",
    );
    expect(unknownAction).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          pointer: "/views/0/rowActions/0/mutation",
          reason: expect.stringMatching(/names the mutation PokeTag, which no .graphql document/),
        }),
      ]),
    );
  });

  it("refuses an action, link or row link that leads to no screen", () => {
    const problems = withScreen(
      {
        ...base,
        views: [
          {
            kind: "list",
            query: "BrokenList",
            rows: "tags",
            columns: [{ field: "/label", link: "/broken/{id}" }],
            rowLink: "/broken",
            toolbar: [{ label: "Elsewhere", to: "/nowhere/{id}" }],
          },
        ],
      },
      "query BrokenList { tags { id label } }",
    );
    expect(problems).toEqual([
      expect.objectContaining({
        pointer: "/views/0/columns/0/link",
        reason: "leads to /broken/{id}, which is no screen's route",
      }),
      expect.objectContaining({
        pointer: "/views/0/toolbar/0/to",
        reason: "leads to /nowhere/{id}, which is no screen's route",
      }),
    ]);
  });

  it("refuses an entity schema with a misspelt keyword or a label for no value of its enum", () => {
    dir = mkdtempSync(path.join(tmpdir(), "registry-"));
    cpSync(path.join(rootDir, "schemas"), path.join(dir, "schemas"), { recursive: true });
    cpSync(path.join(rootDir, "screens"), path.join(dir, "screens"), { recursive: true });
    const file = path.join(dir, "schemas/entities/stream.schema.json");
    const stream = JSON.parse(readFileSync(file, "utf8"));
    stream.$defs.dataset["x-enumLabels"].NOT_A_DATASET = "Nothing";
    stream.$defs.metadataMode.requried = ["x"];
    writeFileSync(file, JSON.stringify(stream));
    let problems: { file: string; pointer: string; reason: string }[] = [];
    try {
      loadRegistry(dir, apiSchema);
    } catch (error) {
      if (!(error instanceof RegistryError)) throw error;
      problems = error.problems;
    }
    expect(problems).toEqual(
      expect.arrayContaining([
        {
          file: "schemas/entities/stream.schema.json",
          pointer: "/$defs/dataset/x-enumLabels/NOT_A_DATASET",
          reason: "labels NOT_A_DATASET, which is not a value of its enum",
        },
        {
          file: "schemas/entities/stream.schema.json",
          pointer: "/$defs/metadataMode/requried",
          reason: expect.stringMatching(/^does not compile: .*unknown keyword: "requried"/),
        },
      ]),
    );
  });

  it("refuses a screen nothing leads to", () => {
    const problems = withScreen(
      {
        ...base,
        nav: { hidden: true },
        views: [{ kind: "list", query: "BrokenList", rows: "tags", columns: [{ field: "/label" }] }],
      },
      "query BrokenList { tags { id label } }",
    );
    expect(problems).toEqual([
      expect.objectContaining({ pointer: "/nav", reason: expect.stringMatching(/no navigation entry/) }),
    ]);
  });

  it("accepts the same screen when it is well formed", () => {
    const problems = withScreen(
      { ...base, views: [{ kind: "list", query: "BrokenList", rows: "tags", columns: [{ field: "/label" }] }] },
      "query BrokenList { tags { id label } }",
    );
    expect(problems).toEqual([]);
    expect(readFileSync(path.join(dir as string, "screens/broken.graphql"), "utf8")).toContain("BrokenList");
  });
});
