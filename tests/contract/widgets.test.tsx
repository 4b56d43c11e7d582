// @vitest-environment jsdom
// The names a manifest may use for widgets, form controls, icons and view kinds are declared once, in
// schemas/screen.schema.json (the service validates manifests with it and knows no React); here the
// renderer and the app must register exactly those names.
import { readFileSync } from "node:fs";
import path from "node:path";
import { Theme } from "@rjsf/antd";
import { getDefaultRegistry } from "@rjsf/core";
import { hasWidget, type RJSFSchema } from "@rjsf/utils";
import { describe, expect, it } from "vitest";
import "../../renderer/index.ts";
import "../../src/icons.ts";
import "../../src/widgets/index.ts";
import { formFields } from "../../renderer/form/SchemaForm.tsx";
import { iconNames } from "../../renderer/icons.tsx";
import { viewKinds } from "../../renderer/screens.tsx";
import { editWidgets, getWidget, widgetNames } from "../../renderer/widgets/registry.ts";
import { discriminatorValues } from "../../server/registry/registry.ts";

const metaSchema = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, "../../schemas/screen.schema.json"), "utf8"),
) as { $defs: Record<string, { enum?: string[] } & Record<string, unknown>> };

const declared = (name: string) => [...(metaSchema.$defs[name].enum ?? [])].sort();
const registered = (part: "read" | "edit" | "view") =>
  widgetNames()
    .filter((name) => getWidget(name)?.[part])
    .sort();

describe("the names manifests may use", () => {
  it("declare every registered widget, and only those", () => {
    expect(registered("read")).toEqual(declared("readWidget"));
    expect(registered("view")).toEqual(declared("viewWidget"));
    expect(registered("edit")).toEqual(declared("editWidget"));
    const declaredAll = new Set([...declared("readWidget"), ...declared("viewWidget"), ...declared("editWidget")]);
    expect(widgetNames().filter((name) => !declaredAll.has(name))).toEqual([]);
  });

  it("declare exactly the form fields the renderer provides", () => {
    expect(Object.keys(formFields).sort()).toEqual(declared("formField"));
  });

  it("name only rjsf form controls rjsf has", () => {
    const widgets = { ...getDefaultRegistry().widgets, ...Theme.widgets, ...editWidgets() };
    const types: RJSFSchema[] = [{ type: "string" }, { type: "boolean" }, { type: "number" }, { type: "array" }];
    const missing = declared("formWidget").filter((name) => !types.some((schema) => hasWidget(schema, name, widgets)));
    expect(missing).toEqual([]);
  });

  it("declare exactly the icons the app registers", () => {
    expect(iconNames().sort()).toEqual(declared("icon"));
  });

  it("declare exactly the view kinds the renderer shows", () => {
    const kinds = discriminatorValues(metaSchema.$defs.view, "kind", metaSchema);
    expect(viewKinds().sort()).toEqual((kinds as string[]).sort());
  });
});
