// The renderer's pure parts: widget predicates, the permission function, paths, references,
// predicates, templates, server field errors, remote options, chart options and schema references.
import { describe, expect, it } from "vitest";
import { actionState } from "../../../renderer/actions.tsx";
import { coerceVariables } from "../../../renderer/data.tsx";
import { mapFieldErrors } from "../../../renderer/form/fieldErrors.ts";
import { buildOptions } from "../../../renderer/form/RemoteOptions.tsx";
import { formatBytes } from "../../../renderer/format.ts";
import { can, readOnlyFor, requiredRole } from "../../../renderer/permissions.ts";
import {
  evalPredicate,
  fillRoute,
  fillTemplate,
  getPath,
  getPointer,
  resolveValue,
  resolveVariables,
} from "../../../renderer/resolve.ts";
import {
  enumLabel,
  fieldSchema,
  humanize,
  labelFor,
  resolveSchemaRef,
  withEnumNames,
} from "../../../renderer/schema.ts";
import type { JsonSchema } from "../../../renderer/types.ts";
import { buildChartOption, coloursByName, tickLabels, timeTicks } from "../../../renderer/views/chartOption.ts";
import { descending } from "../../../renderer/views/useListState.ts";
import { relativeTime, statusColor } from "../../../renderer/widgets/builtins.tsx";
import { DEFAULT_RULES, isDateTime, isEnum, isTagList, isUri, pickWidget } from "../../../renderer/widgets/registry.ts";

describe("variables from the URL", () => {
  it("take the scalar type their operation declares", () => {
    const document = `fragment F on Usage { total }
query UsageOverview($periodIndex: Int, $tickType: UsageTickType, $pastDay: Boolean!, $ratio: Float, $ids: [Int]) { usage { ...F } }`;
    expect(
      coerceVariables(document, { periodIndex: "-1", tickType: "DAY", pastDay: "true", ratio: "0.5", ids: ["1"] }),
    ).toEqual({ periodIndex: -1, tickType: "DAY", pastDay: true, ratio: 0.5, ids: ["1"] });
    expect(coerceVariables(document, { periodIndex: "x", pastDay: false })).toEqual({
      periodIndex: "x",
      pastDay: false,
    });
  });
});

describe("widget predicates", () => {
  it("each named predicate recognises its shape", () => {
    expect(isEnum({ enum: ["A", "B"] })).toBe(true);
    expect(isEnum({ type: "string" })).toBe(false);
    expect(isUri({ type: "string", format: "uri" })).toBe(true);
    expect(isDateTime({ type: "string", format: "date-time" })).toBe(true);
    expect(isTagList({ type: "array", items: { type: "object", properties: { label: { type: "string" } } } })).toBe(
      true,
    );
    expect(isTagList({ type: "array", items: { type: "string" } })).toBe(true);
    expect(isTagList({ type: "array", items: { type: "object", properties: { id: { type: "string" } } } })).toBe(false);
  });

  it("an explicit widget wins; otherwise the first predicate that holds", () => {
    expect(pickWidget("code", { type: "string", format: "uri" })).toBe("code");
    expect(pickWidget(undefined, { enum: ["ACTIVE"] })).toBe("status");
    expect(pickWidget(undefined, { type: "string", format: "uri" })).toBe("link");
    expect(pickWidget(undefined, { type: "string", format: "date-time" })).toBe("datetime");
    expect(pickWidget(undefined, { type: "string", format: "email" })).toBe("email");
    expect(pickWidget(undefined, { type: ["boolean", "null"] })).toBe("boolean");
    expect(pickWidget(undefined, { type: "integer" })).toBe("number");
    expect(pickWidget(undefined, { type: "array", items: { type: "object", properties: { label: {} } } })).toBe("tags");
    expect(pickWidget(undefined, { type: ["string", "null"] })).toBe("text");
    expect(pickWidget(undefined, undefined)).toBe("text");
  });

  it("rules have unique names", () => {
    expect(new Set(DEFAULT_RULES.map((rule) => rule.name)).size).toBe(DEFAULT_RULES.length);
  });

  it("status colours come from the word, and options override them", () => {
    expect(statusColor("ACTIVE")).toBe("green");
    expect(statusColor("PAUSED")).toBe("orange");
    expect(statusColor("TERMINATED")).toBe("red");
    expect(statusColor("ARCHIVED")).toBe("default");
    expect(statusColor("OWNER", { OWNER: "gold" })).toBe("gold");
  });

  it("relative time reads naturally", () => {
    const now = new Date("2025-01-10T12:00:00Z");
    expect(relativeTime(new Date("2025-01-07T12:00:00Z"), now)).toBe("3 days ago");
    expect(relativeTime(new Date("2025-01-10T13:00:00Z"), now)).toBe("in 1 hour");
  });
});

describe("the permission function", () => {
  it("orders OWNER > ADMIN > VIEWER", () => {
    expect(can("OWNER", "ADMIN")).toBe(true);
    expect(can("ADMIN", "ADMIN")).toBe(true);
    expect(can("ADMIN", "OWNER")).toBe(false);
    expect(can("VIEWER", "ADMIN")).toBe(false);
    expect(can("VIEWER", "VIEWER")).toBe(true);
    expect(can("VIEWER")).toBe(true);
  });

  it("unknown or missing roles can do nothing", () => {
    expect(can(undefined, "VIEWER")).toBe(false);
    expect(can("GUEST", "VIEWER")).toBe(false);
  });

  it("a mutation needs ADMIN unless the manifest opens it to every member", () => {
    expect(requiredRole("VIEWER", true)).toBe("VIEWER");
    expect(requiredRole(undefined, true)).toBe("ADMIN");
    expect(requiredRole("ADMIN", true)).toBe("ADMIN");
    expect(requiredRole("OWNER", true)).toBe("OWNER");
    expect(requiredRole(undefined, false)).toBe("VIEWER");
  });

  it("action state combines visibleWhen, the role and disabledWhen", () => {
    const pause = {
      label: "Pause",
      mutation: "Pause",
      visibleWhen: { field: "/status", eq: "ACTIVE" },
      disabledWhen: { field: "/locked", truthy: true },
    };
    expect(actionState(pause, "ADMIN", { status: "PAUSED" }, {}).visible).toBe(false);
    expect(actionState(pause, "ADMIN", { status: "ACTIVE" }, {})).toEqual({ visible: true, enabled: true });
    expect(actionState(pause, "VIEWER", { status: "ACTIVE" }, {}).enabled).toBe(false);
    expect(actionState(pause, "OWNER", { status: "ACTIVE", locked: true }, {}).enabled).toBe(false);
    expect(actionState({ label: "Open", to: "/x" }, "VIEWER", {}, {}).enabled).toBe(true);
  });
});

describe("paths and references", () => {
  const data = {
    things: {
      edges: [{ node: { id: "a", tags: [{ label: "x" }] } }, { node: { id: "b", tags: [] } }],
      pageInfo: { hasNextPage: true },
    },
    groups: [{ items: [1, 2] }, { items: [3] }],
  };

  it("reads dotted paths, mapping over lists with []", () => {
    expect(getPath(data, "things.edges[].node")).toEqual([data.things.edges[0].node, data.things.edges[1].node]);
    expect(getPath(data, "things.pageInfo.hasNextPage")).toBe(true);
    expect(getPath(data, "groups[].items[]")).toEqual([1, 2, 3]);
    expect(getPath(data, "things.edges.0.node.id")).toBe("a");
    expect(getPath(data, "missing.path")).toBeUndefined();
    expect(getPath(data, "missing[].x")).toEqual([]);
  });

  it("reads JSON pointers", () => {
    expect(getPointer({ a: { "b/c": [5] } }, "/a/b~1c/0")).toBe(5);
    expect(getPointer({ a: 1 }, "")).toEqual({ a: 1 });
  });

  it("resolves references of every scope, deeply", () => {
    const scope = {
      route: { id: "r1" },
      query: { q: "text" },
      row: { id: "row1" },
      record: { id: "rec1", label: "L" },
      form: { label: "new" },
      viewer: { email: "v@x" },
      item: { tagId: "t1" },
    };
    expect(resolveValue("$route.id", scope)).toBe("r1");
    expect(resolveValue("$query.q", scope)).toBe("text");
    expect(resolveValue("$row.id", scope)).toBe("row1");
    expect(resolveValue("$form", scope)).toEqual({ label: "new" });
    expect(resolveValue({ input: { id: "$record.id", tags: ["$item.tagId"] } }, scope)).toEqual({
      input: { id: "rec1", tags: ["t1"] },
    });
    expect(resolveValue("$viewer.email", scope)).toBe("v@x");
    expect(resolveValue("plain $text", scope)).toBe("plain $text");
    expect(resolveVariables({ a: "$form.missing", b: 2, c: "" }, scope)).toEqual({ b: 2 });
  });

  it("fills templates and routes", () => {
    expect(fillTemplate("/things/{createThing.id}", { createThing: { id: "a b" } }, true)).toBe("/things/a%20b");
    expect(fillTemplate("{label} plan", { label: "Build" })).toBe("Build plan");
    expect(fillRoute("/things/:thingId/tab", { thingId: "7" })).toBe("/things/7/tab");
    expect(fillRoute("/things/:thingId", {})).toBeNull();
  });

  it("evaluates serialisable predicates, with references in compared values", () => {
    const row = { status: "ACTIVE", chain: "c1", flag: 0 };
    expect(evalPredicate({ field: "/status", eq: "ACTIVE" }, row)).toBe(true);
    expect(evalPredicate({ field: "/status", neq: "ACTIVE" }, row)).toBe(false);
    expect(evalPredicate({ field: "/status", in: ["PAUSED", "ACTIVE"] }, row)).toBe(true);
    expect(evalPredicate({ field: "/flag", truthy: false }, row)).toBe(true);
    expect(evalPredicate({ not: { field: "/status", eq: "ACTIVE" } }, row)).toBe(false);
    expect(
      evalPredicate(
        {
          all: [
            { field: "/status", eq: "ACTIVE" },
            { field: "/chain", eq: "c1" },
          ],
        },
        row,
      ),
    ).toBe(true);
    expect(
      evalPredicate(
        {
          any: [
            { field: "/status", eq: "X" },
            { field: "/chain", eq: "c1" },
          ],
        },
        row,
      ),
    ).toBe(true);
    expect(evalPredicate({ field: "/chain", eq: "$form.chain" }, row, { form: { chain: "c1" } })).toBe(true);
    expect(evalPredicate(undefined, row)).toBe(true);
  });
});

describe("schemas", () => {
  const entity: JsonSchema = {
    $id: "thing",
    properties: {
      createdAt: { type: "string", format: "date-time", title: "Created" },
      rates: { type: "array", items: { type: "object", properties: { rate: { type: "integer" } } } },
    },
    $defs: {
      label: { type: "string", title: "Label", minLength: 1 },
      createInput: { type: "object", required: ["label"], properties: { label: { $ref: "#/$defs/label" } } },
    },
  };

  it("resolves a form schema reference, keeping $defs and dropping $id", () => {
    const form = resolveSchemaRef({ thing: entity }, "thing#/$defs/createInput");
    expect(form.$id).toBeUndefined();
    expect(form.required).toEqual(["label"]);
    expect(form.$defs?.label).toEqual(entity.$defs?.label);
    expect(() => resolveSchemaRef({}, "nothing#/$defs/x")).toThrow(/not in the registry/);
  });

  it("copies what a form references in another entity into its own $defs", () => {
    const other: JsonSchema = {
      $id: "other",
      $defs: {
        part: { type: "object", properties: { code: { $ref: "#/$defs/code" }, back: { $ref: "thing#/$defs/label" } } },
        code: { type: "string", minLength: 1 },
      },
    };
    const thing: JsonSchema = {
      $id: "thing",
      $defs: {
        label: { type: "string" },
        createInput: {
          type: "object",
          properties: { label: { $ref: "#/$defs/label" }, part: { $ref: "other#/$defs/part", title: "Part" } },
        },
      },
    };
    const form = resolveSchemaRef({ thing, other }, "thing#/$defs/createInput");
    expect(form.properties?.label).toEqual({ $ref: "#/$defs/label" });
    expect(form.properties?.part).toEqual({ $ref: "#/$defs/other_defs_part", title: "Part" });
    expect(form.$defs?.other_defs_part).toEqual({
      type: "object",
      properties: { code: { $ref: "#/$defs/other_defs_code" }, back: { $ref: "#/$defs/label" } },
    });
    expect(form.$defs?.other_defs_code).toEqual({ type: "string", minLength: 1 });
    expect(() =>
      resolveSchemaRef({ thing: { $defs: { f: { $ref: "other#/$defs/none" } } }, other }, "thing#/$defs/f"),
    ).toThrow(/other#\/\$defs\/none does not exist/);
  });

  it("finds field schemas by pointer and labels fields", () => {
    expect(fieldSchema(entity, "/rates/0/rate")).toEqual({ type: "integer" });
    expect(labelFor({ field: "/createdAt" }, fieldSchema(entity, "/createdAt"))).toBe("Created");
    expect(labelFor({ field: "/userFullName" }, undefined)).toBe("User full name");
    expect(labelFor({ field: "/x", label: "Mine" }, undefined)).toBe("Mine");
    expect(humanize("LIMIT_REACHED")).toBe("Limit reached");
  });

  it("labels enum values from x-enumLabels, else humanised, in read views and in form selects", () => {
    const region: JsonSchema = { enum: ["USA_EAST", "ASIA_EAST"], "x-enumLabels": { USA_EAST: "USA East" } };
    expect(enumLabel(region, "USA_EAST")).toBe("USA East");
    expect(enumLabel(region, "ASIA_EAST")).toBe("Asia east");
    const form: JsonSchema = {
      type: "object",
      properties: {
        region: { $ref: "#/$defs/region" },
        status: { enum: ["ACTIVE", "PAUSED"] },
        chosen: { enum: ["A"] },
        kinds: { type: "array", items: { enum: ["NODEJS"], "x-enumLabels": { NODEJS: "Node.js" } } },
        destinationAttributes: { type: "object" },
        name: { type: "string" },
      },
      allOf: [
        {
          if: { properties: { status: { const: "ACTIVE" } } },
          // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable.
          then: {
            properties: {
              destinationAttributes: {
                properties: { compression: { enum: ["GZIP"], "x-enumLabels": { GZIP: "gzip" } } },
              },
            },
          },
        },
      ],
      $defs: { region },
    };
    const given = { chosen: { "ui:widget": "remote-options" }, name: { "ui:autofocus": true } };
    const ui = withEnumNames(form, given);
    expect(ui.region).toEqual({ "ui:enumNames": { USA_EAST: "USA East", ASIA_EAST: "Asia east" } });
    expect(ui.status).toEqual({ "ui:enumNames": { ACTIVE: "Active", PAUSED: "Paused" } });
    expect(ui.kinds).toEqual({ "ui:enumNames": { NODEJS: "Node.js" } });
    expect(ui.chosen).toEqual({ "ui:widget": "remote-options" });
    expect(ui.name).toEqual({ "ui:autofocus": true });
    expect(ui.destinationAttributes).toEqual({ compression: { "ui:enumNames": { GZIP: "gzip" } } });
    expect(given).toEqual({ chosen: { "ui:widget": "remote-options" }, name: { "ui:autofocus": true } });
  });
});

describe("server field errors", () => {
  const schema: JsonSchema = { type: "object", properties: { label: { type: "string" }, chain: { type: "string" } } };

  it("maps pointers relative to the input object", () => {
    const { extraErrors, unmatched } = mapFieldErrors(
      [{ pointer: "/label", message: "Too long" }],
      { input: "$form" },
      schema,
    );
    expect(extraErrors).toEqual({ label: { __errors: ["Too long"] } });
    expect(unmatched).toEqual([]);
  });

  it("maps scalar arguments through the variables that fed them", () => {
    const { extraErrors } = mapFieldErrors(
      [{ pointer: "/label", message: "Taken" }],
      { id: "$record.id", label: "$form.label" },
      schema,
    );
    expect(extraErrors).toEqual({ label: { __errors: ["Taken"] } });
  });

  it("maps a form field placed inside an argument, named from the argument or from inside it", () => {
    const variables = { input: { id: "$route.id", label: "$form.label" } };
    for (const pointer of ["/label", "/input/label"]) {
      const { extraErrors, unmatched } = mapFieldErrors([{ pointer, message: "Not JSON" }], variables, schema);
      expect(extraErrors).toEqual({ label: { __errors: ["Not JSON"] } });
      expect(unmatched).toEqual([]);
    }
    expect(mapFieldErrors([{ pointer: "/id", message: "Bad id" }], variables, schema).unmatched).toEqual(["Bad id"]);
  });

  it("keeps errors that match no field apart", () => {
    const { unmatched } = mapFieldErrors(
      [{ pointer: "/id", message: "Bad id" }],
      { id: "$record.id", label: "$form.label" },
      schema,
    );
    expect(unmatched).toEqual(["Bad id"]);
  });
});

describe("byte counts", () => {
  it("scale to binary units as limits are set, bytes below one KiB as they are", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1,023 B");
    expect(formatBytes(6440)).toBe("6.3 KiB");
    expect(formatBytes(65_536)).toBe("64 KiB");
    expect(formatBytes(64 * 1024 * 1024)).toBe("64 MiB");
    expect(formatBytes(3 * 1024 ** 4)).toBe("3 TiB");
  });
});

describe("remote options", () => {
  const data = {
    chains: [
      { chain: "c1", networks: [{ value: "n1", label: "One", chain: "c1", beta: true, comingSoon: false }] },
      { chain: "c2", networks: [{ value: "n2", label: "Two", chain: "c2", beta: false, comingSoon: true }] },
    ],
  };
  const source = {
    query: "Q",
    rows: "chains[].networks[]",
    value: "/value",
    label: "/label",
    where: { field: "/chain", eq: "$form.chain" },
    disabledWhen: { field: "/comingSoon", truthy: true },
    badges: [{ when: { field: "/beta", truthy: true }, label: "Beta" }],
  };

  it("filters by the form's other fields, disables and marks options", () => {
    expect(buildOptions(source, data, { form: { chain: "c1" } })).toEqual([
      { value: "n1", label: "One", disabled: false, badges: [{ label: "Beta", color: undefined }] },
    ]);
    expect(buildOptions(source, data, { form: { chain: "c2" } })[0].disabled).toBe(true);
    expect(buildOptions(source, data, { form: {} })).toEqual([]);
  });
});

describe("lists and charts", () => {
  it("derives the descending sort", () => expect(descending("LABEL_ASC")).toBe("LABEL_DESC"));

  it("builds chart series from rows through encode", () => {
    const option = buildChartOption(
      {
        kind: "chart",
        query: "Q",
        chartType: "line",
        series: [{ rows: "points", encode: { x: "/t", y: "/v", series: "/name" } }],
      },
      {
        points: [
          { t: 1, v: 2, name: "a" },
          { t: 2, v: 3, name: "a" },
          { t: 1, v: 5, name: "b" },
        ],
      },
    );
    const series = option.series as { name: string; data: unknown[]; type: string }[];
    expect(series.map((entry) => entry.name)).toEqual(["a", "b"]);
    expect(series[0].data).toEqual([
      [1, 2],
      [2, 3],
    ]);
    expect(series[0].type).toBe("line");
    // "b" has one point: no line can be drawn, so its symbol shows.
    expect((option.series as { showSymbol: boolean }[]).map((entry) => entry.showSymbol)).toEqual([false, true]);
    const pie = buildChartOption(
      { kind: "chart", query: "Q", chartType: "pie", series: [{ rows: "points", encode: { x: "/name", y: "/v" } }] },
      { points: [{ v: 2, name: "a" }] },
    );
    expect((pie.series as { data: unknown[] }[])[0].data).toEqual([
      { name: "a", value: 2, itemStyle: { color: coloursByName(["a"]).get("a") } },
    ]);
    // The usage donut's small slices' labels overlapped: a thin slice has none, an overlapping label hides.
    expect((pie.series as Record<string, unknown>[])[0]).toMatchObject({
      minShowLabelAngle: 6,
      labelLayout: { hideOverlap: true },
    });
  });

  it("draws the series a view names dashed (a projection beside what happened), the others solid", () => {
    const option = buildChartOption(
      {
        kind: "chart",
        query: "Q",
        chartType: "line",
        dashedSeries: ["PROJECTED"],
        series: [{ rows: "points", encode: { x: "/t", y: "/v", series: "/name" } }],
      },
      {
        points: [
          { t: 1, v: 2, name: "USED" },
          { t: 2, v: 3, name: "USED" },
          { t: 2, v: 3, name: "PROJECTED" },
          { t: 3, v: 5, name: "PROJECTED" },
        ],
      },
    );
    const styles = (option.series as { name: string; lineStyle: { type?: string } }[]).map((s) => [
      s.name,
      s.lineStyle.type,
    ]);
    expect(styles).toEqual([
      ["USED", undefined],
      ["PROJECTED", "dashed"],
    ]);
  });

  it("a chart of bytes reads its axis and tooltip as byte sizes", () => {
    const option = buildChartOption(
      {
        kind: "chart",
        query: "Q",
        chartType: "bar",
        yUnit: "B",
        series: [{ rows: "points", encode: { x: "/t", y: "/v" } }],
      },
      { points: [{ t: 1, v: 21_000 }] },
    );
    const axis = option.yAxis as { axisLabel: { formatter: (value: number) => string } };
    expect([0, 512, 6_451, 21_000, 67_108_864].map(axis.axisLabel.formatter)).toEqual([
      "0 B",
      "512 B",
      "6.3 KiB",
      "21 KiB",
      "64 MiB",
    ]);
    // Ticks on the binary grid: 5 KiB apart up to 21,000 bytes, not ECharts' 10,000, 20,000.
    expect(option.yAxis).toMatchObject({ interval: 5 * 1024, max: 25 * 1024 });
    const tooltip = option.tooltip as { valueFormatter: (value: unknown) => string };
    // Counts get whole ticks; measures with fractions keep ECharts' own.
    const axisOf = (values: number[]) =>
      buildChartOption(
        { kind: "chart", query: "Q", chartType: "bar", series: [{ rows: "points", encode: { x: "/t", y: "/v" } }] },
        { points: values.map((v, t) => ({ t, v })) },
      ).yAxis as { minInterval?: number };
    expect(axisOf([3, 1, 0]).minInterval).toBe(1);
    expect(axisOf([1.8, 2]).minInterval).toBeUndefined();
    expect(tooltip.valueFormatter(21_000)).toBe("21 KiB");
  });

  it("spans a time axis over its data only, never past now, with ticks on the data's own points", () => {
    const at = (iso: string) => Date.parse(iso);
    const chart = (chartType: "bar" | "line", times: string[], now: number) =>
      buildChartOption(
        { kind: "chart", query: "Q", chartType, series: [{ rows: "points", encode: { x: "/t", y: "/v" } }] },
        { points: times.map((t) => ({ t, v: 1 })) },
        now,
      ).xAxis as {
        min: number;
        max: number;
        axisTick: { customValues: number[] };
        axisLabel: { customValues: number[] };
      };
    // Per-minute bars: half a minute either side, and a tick on each minute (there are four).
    const minutes = chart(
      "bar",
      ["2026-11-25T08:59:00Z", "2026-11-25T09:00:00Z", "2026-11-25T09:02:00Z"],
      at("2026-11-25T10:00:00Z"),
    );
    expect(minutes.min).toBe(at("2026-11-25T08:58:30Z"));
    expect(minutes.max).toBe(at("2026-11-25T09:02:30Z"));
    expect(minutes.axisTick.customValues).toEqual(
      ["08:59", "09:00", "09:01", "09:02"].map((hm) => at(`2026-11-25T${hm}:00Z`)),
    );
    expect(minutes.axisLabel.customValues).toEqual(minutes.axisTick.customValues);
    // The current minute's bar ends at now, not half a minute into the future.
    const current = chart("bar", ["2026-11-25T08:59:00Z", "2026-11-25T09:00:00Z"], at("2026-11-25T09:00:10Z"));
    expect(current.max).toBe(at("2026-11-25T09:00:10Z"));
    // Hourly points over a day: a line ends at its last point; at most 7 ticks, each one of the points.
    const hours = Array.from({ length: 25 }, (_, i) =>
      new Date(at("2026-11-24T09:00:00Z") + i * 3_600_000).toISOString(),
    );
    const day = chart("line", hours, at("2026-11-25T09:30:00Z"));
    expect(day.min).toBe(at(hours[0]));
    expect(day.max).toBe(at(hours[24]));
    const ticks = day.axisTick.customValues;
    expect(ticks.length).toBeGreaterThan(1);
    expect(ticks.length).toBeLessThanOrEqual(7);
    expect(ticks.every((t) => hours.map(at).includes(t))).toBe(true);
    expect(new Set(ticks.slice(1).map((t, i) => t - ticks[i]))).toEqual(new Set([6 * 3_600_000]));
    // A lone point gets a minute around it (ECharts would pad it with a day either side), capped at now.
    const one = chart("bar", ["2026-11-25T08:59:00Z"], at("2026-11-25T08:59:10Z"));
    expect([one.min, one.max]).toEqual([at("2026-11-25T08:58:30Z"), at("2026-11-25T08:59:10Z")]);
    expect(one.axisTick.customValues).toEqual([at("2026-11-25T08:59:00Z")]);
  });

  it("spans a time axis over the window its result names, on the step's grid, bars zero and lines broken where nothing was", () => {
    const at = (iso: string) => Date.parse(iso);
    const view = (chartType: "bar" | "line"): Parameters<typeof buildChartOption>[0] => ({
      kind: "chart",
      query: "Q",
      chartType,
      timeAxis: { from: "m.from", to: "m.to", stepSeconds: "m.stepSeconds" },
      series: [{ rows: "m.points", encode: { x: "/t", y: "/v" } }],
    });
    type Axis = {
      min: number;
      max: number;
      axisTick: { customValues: number[] };
      axisLabel: { customValues: number[] };
    };
    const labelsOf = (axis: Axis) =>
      axis.axisLabel.customValues.map((tick) =>
        (axis.axisLabel as unknown as { formatter: (v: number) => string }).formatter(tick),
      );
    // Last 7 days per hour, with runs in two hours of the last: the axis spans the 7 days, not the two hours.
    const week = {
      m: {
        from: "2026-11-20T09:30:00Z",
        to: "2026-11-27T09:30:00Z",
        stepSeconds: 3600,
        points: [
          { t: "2026-11-27T07:00:00Z", v: 2 },
          { t: "2026-11-27T09:00:00Z", v: 1 },
        ],
      },
    };
    const bars = buildChartOption(view("bar"), week, at("2026-11-27T09:30:00Z"));
    const axis = bars.xAxis as Axis;
    // From the hour holding the start, half an hour before it for the bar, to now (the last bar ends at now).
    expect(axis.min).toBe(at("2026-11-20T08:30:00Z"));
    expect(axis.max).toBe(at("2026-11-27T09:30:00Z"));
    const data = (bars.series as { data: [number, number][] }[])[0].data;
    expect(data).toHaveLength(7 * 24 + 1);
    expect(data[0]).toEqual([at("2026-11-20T09:00:00Z"), 0]);
    expect(data.filter(([, y]) => y !== 0)).toEqual([
      [at("2026-11-27T07:00:00Z"), 2],
      [at("2026-11-27T09:00:00Z"), 1],
    ]);
    // At most seven ticks, days apart, on the hourly grid; a tick at midnight reads as its date.
    const ticks = axis.axisTick.customValues;
    expect(ticks.length).toBeGreaterThan(1);
    expect(ticks.length).toBeLessThanOrEqual(7);
    expect(ticks.every((tick) => (tick - at("2026-11-20T09:00:00Z")) % 3_600_000 === 0)).toBe(true);
    expect(ticks[1] - ticks[0]).toBeGreaterThanOrEqual(86_400_000);
    expect(labelsOf(axis).every((label) => /^[A-Z][a-z]{2} \d+$/.test(label))).toBe(true);
    // A line (an average) has gaps where nothing ran; a point between gaps shows as its symbol.
    const line = buildChartOption(view("line"), week, at("2026-11-27T09:30:00Z"));
    const lineSeries = (line.series as { data: [number, number | null][]; showSymbol: boolean }[])[0];
    expect(lineSeries.data.at(-2)).toEqual([at("2026-11-27T08:00:00Z"), null]);
    expect(lineSeries.showSymbol).toBe(true);
    expect((line.xAxis as Axis).min).toBe(at("2026-11-20T09:00:00Z"));
    // The last hour per minute: times on the ticks.
    const hour = buildChartOption(
      view("bar"),
      {
        m: {
          from: "2026-11-27T08:30:00Z",
          to: "2026-11-27T09:30:00Z",
          stepSeconds: 60,
          points: [{ t: "2026-11-27T09:12:00Z", v: 3 }],
        },
      },
      at("2026-11-27T09:30:00Z"),
    );
    expect((hour.series as { data: unknown[] }[])[0].data).toHaveLength(60);
    expect(
      labelsOf(hour.xAxis as Axis)
        .slice(1)
        .every((label) => /^\d\d:\d\d$/.test(label)),
    ).toBe(true);
    // Days are the service's UTC days: dates, whatever the viewer's zone.
    const days = buildChartOption(
      view("bar"),
      {
        m: {
          from: "2026-06-01T00:00:00Z",
          to: "2026-11-27T09:30:00Z",
          stepSeconds: 86_400,
          points: [{ t: "2026-11-01T00:00:00Z", v: 3 }],
        },
      },
      at("2026-11-27T09:30:00Z"),
    );
    expect(labelsOf(days.xAxis as Axis).every((label) => /^[A-Z][a-z]{2} \d+$/.test(label))).toBe(true);
    expect((days.xAxis as Axis).axisTick.customValues.every((tick) => tick % 86_400_000 === 0)).toBe(true);
    expect((days.xAxis as Axis).min).toBe(at("2026-05-31T12:00:00Z"));
    // No points: nothing to draw (the chart says so); no window in the result: the axis spans the data.
    const none = buildChartOption(view("bar"), { m: { ...week.m, points: [] } });
    expect(none.series).toEqual([]);
    const unnamed = buildChartOption(view("bar"), { m: { points: week.m.points } }, at("2026-11-27T09:30:00Z"));
    expect((unnamed.xAxis as Axis).min).toBe(at("2026-11-27T06:00:00Z"));
  });

  it("labels time ticks with the date where a day starts and the time within it", () => {
    const ticks = [0, 6, 12, 18, 24].map((h) => Date.UTC(2026, 10, 24, 12) + h * 3_600_000);
    const labels = [...tickLabels(ticks, 3_600_000).values()];
    expect(labels[0]).toMatch(/^Nov \d+ \d\d:\d\d$/);
    expect(labels.filter((l) => /^Nov/.test(l)).length).toBeGreaterThanOrEqual(2);
    expect(labels.filter((l) => /^\d\d:\d\d$/.test(l)).length).toBeGreaterThanOrEqual(2);
    expect([...tickLabels([Date.UTC(2026, 10, 24, 12)], 86_400_000).values()]).toEqual(["Nov 24"]);
    expect(timeTicks(0, 59 * 60_000, 60_000)).toEqual([0, 10, 20, 30, 40, 50].map((m) => m * 60_000));
  });

  it("stacks named bars, keeps the y labels, and colours a name alike in a bar and a pie chart", () => {
    const rows = {
      points: ["eth_call", "eth_chainId", "eth_blockNumber", "eth_getLogs"].map((name) => ({ name, v: 1 })),
    };
    const bars = buildChartOption(
      {
        kind: "chart",
        query: "Q",
        chartType: "bar",
        series: [{ rows: "points", encode: { x: "/v", y: "/v", series: "/name" } }],
      },
      rows,
    );
    const pie = buildChartOption(
      { kind: "chart", query: "Q", chartType: "pie", series: [{ rows: "points", encode: { x: "/name", y: "/v" } }] },
      rows,
    );
    const barSeries = bars.series as { name: string; stack?: string; itemStyle: { color: string } }[];
    expect(barSeries.every((entry) => entry.stack === "total")).toBe(true);
    expect(bars.yAxis).toStrictEqual({ type: "value", minInterval: 1 });
    const barColours = new Map(barSeries.map((entry) => [entry.name, entry.itemStyle.color]));
    const slices = (pie.series as { data: { name: string; itemStyle: { color: string } }[] }[])[0].data;
    expect(new Map(slices.map((slice) => [slice.name, slice.itemStyle.color]))).toEqual(barColours);
    expect(new Set(barColours.values()).size).toBe(4);
    const nothing = buildChartOption(
      { kind: "chart", query: "Q", chartType: "pie", series: [{ rows: "points", encode: { x: "/name", y: "/v" } }] },
      { points: [{ name: "a", v: 0 }] },
    );
    expect((nothing.series as { data: unknown[] }[])[0].data).toEqual([]);
    const twoSpecs = buildChartOption(
      {
        kind: "chart",
        query: "Q",
        chartType: "bar",
        series: ["Blocks", "Deliveries", "Errors", "Retries"].map((name) => ({
          name,
          rows: "points",
          encode: { x: "/v", y: "/v" },
        })),
      },
      rows,
    );
    const specColours = (twoSpecs.series as { itemStyle: { color: string }; stack?: string }[]).map(
      (e) => e.itemStyle.color,
    );
    expect(new Set(specColours).size).toBe(4);
    expect((twoSpecs.series as { stack?: string }[]).some((e) => e.stack)).toBe(false);
  });
});

describe("a screen's read-only notice", () => {
  const views = [
    { kind: "list", rowActions: [{ label: "Delete", mutation: "DeleteThing" }] },
    { kind: "form", mutation: "RenameMe", role: "VIEWER" },
    { kind: "detail", actions: [{ label: "Transfer", mutation: "Transfer", role: "OWNER" }] },
  ];
  it("names the lowest role a refused change needs, and whether any change is left", () => {
    expect(readOnlyFor("VIEWER", views)).toEqual({ nothing: false, needed: "ADMIN" });
    expect(readOnlyFor("VIEWER", [views[0]])).toEqual({ nothing: true, needed: "ADMIN" });
    expect(readOnlyFor("ADMIN", views)).toEqual({ nothing: false, needed: "OWNER" });
    expect(readOnlyFor("OWNER", views)).toBeNull();
    expect(readOnlyFor("VIEWER", [{ kind: "list", columns: [{ field: "/id" }] }])).toBeNull();
  });
});

describe("a chart's series labels", () => {
  it("name series and slices by the enum's labels and keep their colours by value", () => {
    const view = {
      kind: "chart" as const,
      query: "Q",
      chartType: "bar" as const,
      xType: "category" as const,
      series: [{ rows: "points", encode: { x: "/t", y: "/v", series: "/name" } }],
    };
    const data = {
      points: [
        { t: "a", v: 1, name: "RATE_LIMITED" },
        { t: "a", v: 2, name: "SOMETHING_NEW" },
      ],
    };
    const labels: Record<string, string> = { RATE_LIMITED: "Rate limited" };
    const option = buildChartOption(view, data, Date.now(), (name) => labels[name] ?? name);
    expect((option.series as { name: string }[]).map((s) => s.name)).toEqual(["Rate limited", "SOMETHING_NEW"]);
    const plain = buildChartOption(view, data);
    expect((plain.series as { itemStyle: unknown }[]).map((s) => s.itemStyle)).toEqual(
      (option.series as { itemStyle: unknown }[]).map((s) => s.itemStyle),
    );
  });
});
