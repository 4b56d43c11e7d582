import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { junitReport, validateProject } from "../../scripts/validate.ts";

const rootDir = path.resolve(import.meta.dirname, "../..");
const fixtures = path.join(import.meta.dirname, "fixtures/broken-manifests");

describe("npm run validate", () => {
  it("passes on the repository's own manifests, documents, entity schemas and forms", () => {
    const result = validateProject(rootDir);
    expect(result.problems).toEqual([]);
    expect(result.files).toEqual(
      expect.arrayContaining(["schemas/api.graphql", "schemas/entities/endpoint.schema.json"]),
    );
    expect(result.files.filter((file) => file.endsWith(".screen.json")).length).toBeGreaterThan(3);
  });

  describe("on a copy with a broken manifest", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "validate-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    cpSync(path.join(rootDir, "schemas"), path.join(dir, "schemas"), { recursive: true });
    cpSync(path.join(rootDir, "screens"), path.join(dir, "screens"), { recursive: true });
    writeFileSync(path.join(dir, "screens/broken.graphql"), "query BrokenList { tags { id label } }");
    writeFileSync(
      path.join(dir, "screens/broken.screen.json"),
      JSON.stringify({
        version: 1,
        id: "broken",
        route: "/broken",
        title: "Broken",
        nav: { section: "Test", label: "Broken" },
        views: [
          { kind: "list", query: "BrokenList", rows: "tags", columns: [{ field: "/label", widget: "sparkline" }] },
        ],
      }),
    );

    it("prints file, pointer and reason, exits non-zero and writes a JUnit report", () => {
      const report = path.join(dir, "report.xml");
      const run = spawnSync(
        process.execPath,
        ["--import", "tsx", path.join(rootDir, "scripts/validate.ts"), "--root", dir, "--junit", report],
        { cwd: rootDir, encoding: "utf8" },
      );
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('screens/broken.screen.json /views/0/columns/0/widget: "sparkline" is not one of:');
      const xml = readFileSync(report, "utf8");
      expect(xml).toMatch(/<testsuite name="nodeplane validate" tests="\d+" failures="1"/);
      expect(xml).toMatch(
        /<testcase classname="nodeplane.validate" name="screens\/broken.screen.json" file="screens\/broken.screen.json">\s*<failure message="\/views\/0\/columns\/0\/widget: &quot;sparkline&quot; is not one of:/,
      );
      expect(xml).toContain(
        '<testcase classname="nodeplane.validate" name="screens/broken.graphql" file="screens/broken.graphql"/>',
      );
      // A process of its own that loads TypeScript: seconds on a busy machine.
    }, 60_000);
  });
});

/**
 * One broken manifest per kind of mistake (tests/contract/fixtures/broken-manifests), each beside the
 * same well-formed operations: validate reports exactly that mistake, at its pointer, and nothing else.
 */
describe("npm run validate on the broken-manifest fixtures", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "validate-fixtures-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(path.join(rootDir, "schemas"), path.join(dir, "schemas"), { recursive: true });
  cpSync(path.join(rootDir, "screens"), path.join(dir, "screens"), { recursive: true });
  const brokenDir = path.join(dir, "screens/broken");

  /** The problems validate finds in the fixture's files, with the repository's screens beside them. */
  function problemsWith(...names: string[]) {
    rmSync(brokenDir, { recursive: true, force: true });
    mkdirSync(brokenDir);
    for (const name of ["operations.graphql", ...names])
      copyFileSync(path.join(fixtures, name), path.join(brokenDir, name));
    const result = validateProject(dir);
    return { result, problems: result.problems.filter((p) => p.file.startsWith("screens/broken/")) };
  }

  const cases: [fixture: string, pointer: string, reason: RegExp][] = [
    [
      "column-field",
      "/views/0/columns/0/field",
      /^\/prettyNmae is not in a row of BrokenEndpoints: Endpoint has no field prettyNmae \(the operation selects id, label, status, tags\)$/,
    ],
    ["rows", "/views/0/rows", /^planz holds no rows: Query has no field planz \(the operation selects endpoints\)$/],
    ["row-key", "/views/0/rowKey", /^\/uuid is not in a row of BrokenEndpoints: Endpoint has no field uuid/],
    ["entity", "/views/0/entity", /^names the entity endpoints, which schemas\/entities does not define$/],
    [
      "paging-path",
      "/views/0/paging/endCursor",
      /^endpoints.pageInfo.cursor reads nothing: PageInfo has no field cursor/,
    ],
    [
      "filter-variable",
      "/views/0/filters/0/variable",
      /^BrokenEndpoints declares no variable \$state \(it declares \$first, \$after, \$status\)$/,
    ],
    ["filter-field", "/views/0/filters/0/field", /^\/state is not in the entity schema endpoint$/],
    [
      "filter-options",
      "/views/0/filters/0/options/label",
      /^\/name is not in a row of BrokenTags: Tag has no field name/,
    ],
    ["link-placeholder", "/views/0/rowLink", /^\{uuid\} reads nothing: Endpoint has no field uuid/],
    ["link-text", "/views/0/columns/1/options/text", /^\{number\} reads nothing: Endpoint has no field number/],
    [
      "detail-record",
      "/views/0/record",
      /^endpoints reads nothing: Query.endpoints is not selected by the operation \(it selects endpoint\)$/,
    ],
    [
      "detail-field",
      "/views/0/sections/0/fields/1/field",
      /^\/httpUrl is not in the record of BrokenEndpoint: Endpoint.httpUrl is not selected by the operation \(it selects id, label, status\)$/,
    ],
    [
      "route-parameter",
      "/views/0/variables/id",
      /^\$route.id reads the route parameter :id, which the route \/broken\/:endpointId does not have$/,
    ],
    [
      "form-options",
      "/views/0/uiSchema/id/ui:options/value",
      /^\/tagId is not in a row of BrokenTags: Tag has no field tagId/,
    ],
    [
      "form-suggestions-create",
      "/views/0/uiSchema/label/ui:options/create/value",
      /^archiveEndpoint.token reads nothing: Endpoint has no field token/,
    ],
    ["chart-encode", "/views/0/series/0/encode/y", /^\/count is not in a row of tags: Tag has no field count/],
    [
      "action-reference",
      "/views/0/rowActions/0/variables/id",
      /^\$row.endpointId reads nothing: Endpoint has no field endpointId/,
    ],
    [
      "action-variable",
      "/views/0/rowActions/0/variables/reason",
      /^BrokenArchive declares no variable \$reason \(it declares \$id\)$/,
    ],
    [
      "action-missing-variable",
      "/views/0/rowActions/0",
      /^BrokenArchive needs the variable \$id, which is not passed$/,
    ],
    [
      "action-condition",
      "/views/0/rowActions/0/visibleWhen/field",
      /^\/state is not in what the condition reads: Endpoint has no field state/,
    ],
    [
      "action-result",
      "/views/0/actions/0/showResult/field",
      /^\/archiveEndpoint\/token is not in the answer of BrokenArchive: Endpoint has no field token/,
    ],
  ];

  it.each(cases)("%s: reported at its pointer, alone", (fixture, pointer, reason) => {
    const { problems } = problemsWith(`${fixture}.screen.json`);
    expect(problems).toEqual([
      { file: `screens/broken/${fixture}.screen.json`, pointer, reason: expect.stringMatching(reason) },
    ]);
  });

  it("every fixture is a case here, so none is left unchecked", () => {
    const files = readdirSync(fixtures).filter((name) => name.endsWith(".screen.json"));
    expect(files.map((name) => name.replace(".screen.json", "")).sort()).toEqual(cases.map(([name]) => name).sort());
  });

  it("a GraphQL error in a document: its file, line and column, in the output and the JUnit report", () => {
    const { result, problems } = problemsWith("document-error.graphql");
    expect(problems).toEqual([
      {
        file: "screens/broken/document-error.graphql",
        pointer: "",
        line: 6,
        column: 5,
        reason: 'BrokenTagNames: Cannot query field "name" on type "Tag".',
      },
    ]);
    expect(junitReport(result)).toContain(
      '<failure message="6:5: BrokenTagNames: Cannot query field &quot;name&quot; on type &quot;Tag&quot;." type="6:5">screens/broken/document-error.graphql:6:5: BrokenTagNames',
    );
  });

  it("the JUnit report names the manifest's file and pointer for a broken reference", () => {
    const { result } = problemsWith("column-field.screen.json");
    expect(junitReport(result)).toMatch(
      /<testcase classname="nodeplane.validate" name="screens\/broken\/column-field.screen.json" file="screens\/broken\/column-field.screen.json">\s*<failure message="\/views\/0\/columns\/0\/field: \/prettyNmae is not in a row of BrokenEndpoints/,
    );
  });
});

describe("npm run validate on catalogue data", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "validate-catalogue-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(path.join(rootDir, "schemas"), path.join(dir, "schemas"), { recursive: true });
  cpSync(path.join(rootDir, "screens"), path.join(dir, "screens"), { recursive: true });

  it("names the file and pointer of a plan whose price is not integer minor units, and a coupon of two kinds", () => {
    const plansFile = path.join(dir, "schemas/catalogue/plans.json");
    const plans = JSON.parse(readFileSync(plansFile, "utf8"));
    plans.plans[1].priceCents = 49.5;
    writeFileSync(plansFile, JSON.stringify(plans));
    const couponsFile = path.join(dir, "schemas/catalogue/coupons.json");
    const coupons = JSON.parse(readFileSync(couponsFile, "utf8"));
    coupons.coupons[0].amountOffCents = 100;
    writeFileSync(couponsFile, JSON.stringify(coupons));
    const { problems } = validateProject(dir);
    expect(problems).toContainEqual({
      file: "schemas/catalogue/plans.json",
      pointer: "/plans/1/priceCents",
      reason: "must be integer",
    });
    expect(problems).toContainEqual(
      expect.objectContaining({ file: "schemas/catalogue/coupons.json", pointer: "/coupons/0" }),
    );
  });
});
