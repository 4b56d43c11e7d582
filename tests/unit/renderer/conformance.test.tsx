// @vitest-environment jsdom
// Every manifest in screens/ renders against recorded service responses, and its rows, record
// fields and form fields appear.
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { evalPredicate, getPath, getPointer } from "../../../renderer/resolve.ts";
import { fieldSchema, labelFor, resolveSchemaRef } from "../../../renderer/schema.ts";
import { pickWidget } from "../../../renderer/widgets/registry.ts";
import {
  installDomStandIns,
  manifests,
  recordedResponses,
  registryFor,
  renderRoute,
  routeFor,
  viewerFor,
} from "./harness.tsx";
import { missingKeys } from "./missing-keys.ts";

beforeAll(installDomStandIns);
afterEach(cleanup);

const registry = registryFor("owner");
const VERBATIM = new Set(["text", "code", "link", "email"]);

describe("every manifest renders against recorded responses", () => {
  it("finds manifests", () => expect(manifests.length).toBeGreaterThanOrEqual(5));

  it("has recorded answers as today's documents give them (every selected key present)", () => {
    const stale = Object.entries(recordedResponses)
      .map(([name, answer]) => [name, missingKeys(name, registry.operations[name] ?? "", answer.data)] as const)
      .filter(([, missing]) => missing.length)
      .map(([name, missing]) => `${name}: ${missing.join(", ")}`);
    expect(stale, "record the fixtures again (docs/adding-a-screen.md)").toEqual([]);
  });

  // A slotted screen is no page of its own: slot.test.tsx renders it in its slot.
  for (const { file, manifest } of manifests.filter((entry) => !entry.manifest.slot)) {
    it(`${file} (${manifest.id})`, async () => {
      const { container } = render(renderRoute(routeFor(manifest), { registry, viewer: viewerFor("OWNER") }));
      await waitFor(() => expect(container.querySelector(`[data-screen="${manifest.id}"]`)).not.toBeNull());
      expect(screen.getAllByText(manifest.title).length).toBeGreaterThan(0);

      for (const view of manifest.views) {
        if (view.kind === "list") {
          const listEntity = view.entity ? registry.schemas[view.entity] : undefined;
          const recordedResponse = recordedResponses[view.query];
          expect(recordedResponse?.errors, `${view.query} was recorded without errors`).toBeUndefined();
          const rows = getPath(recordedResponse?.data, view.rows) as Record<string, unknown>[];
          expect(Array.isArray(rows), `${view.query} has recorded rows at ${view.rows}`).toBe(true);
          // A list the demo account leaves empty shows its empty state; otherwise its first row.
          if (!rows.length)
            await waitFor(() =>
              expect(screen.getAllByText(view.empty?.title ?? "Nothing here yet").length).toBeGreaterThan(0),
            );
          const first = rows.length
            ? view.columns.find(
                (column) =>
                  typeof getPointer(rows[0], column.field) === "string" &&
                  // Widgets that show the text as it is (a date shows "3 minutes ago", a status is humanised).
                  VERBATIM.has(pickWidget(column.widget, fieldSchema(listEntity, column.field, registry.schemas))),
              )
            : undefined;
          if (first) {
            const text = String(getPointer(rows[0], first.field));
            await waitFor(() => expect(screen.getAllByText(text).length).toBeGreaterThan(0), { timeout: 10_000 });
          }
          const entity = view.entity ? registry.schemas[view.entity] : undefined;
          for (const column of view.columns) {
            expect(
              screen.getAllByText(labelFor(column, fieldSchema(entity, column.field, registry.schemas))).length,
            ).toBeGreaterThan(0);
          }
        }
        if (view.kind === "detail") {
          const record = getPath(recordedResponses[view.query]?.data, view.record);
          expect(record, `${view.query} has a recorded record`).toBeTruthy();
          const entity = view.entity ? registry.schemas[view.entity] : undefined;
          for (const section of view.sections)
            for (const field of section.fields) {
              // A field shown only when the record has a value (a failure's time) has no label otherwise.
              if (!evalPredicate(field.visibleWhen, record)) continue;
              const label = labelFor(field, fieldSchema(entity, field.field, registry.schemas));
              await waitFor(() => expect(screen.getAllByText(label).length).toBeGreaterThan(0), { timeout: 10_000 });
            }
        }
        if (view.kind === "form") {
          const schema = resolveSchemaRef(registry.schemas, view.schema);
          for (const [key, property] of Object.entries(schema.properties ?? {})) {
            // A field the uiSchema hides (its value comes from the route) has no label to find.
            const ui = (view.uiSchema?.[key] ?? {}) as Record<string, unknown>;
            if (ui["ui:widget"] === "hidden") continue;
            // An object whose fields follow a choice (a destination's settings) shows once it is made.
            if (property.type === "object" && !property.properties && !property.additionalProperties) continue;
            const title =
              property.title ??
              (property.$ref ? (schema.$defs?.[property.$ref.split("/").pop() ?? ""]?.title ?? key) : key);
            // A required checkbox's label carries its asterisk in the same element.
            const labelled = (_: string, element: Element | null) =>
              element?.textContent?.replace(/\*$/, "").trim() === title;
            await waitFor(() => expect(screen.getAllByText(labelled).length).toBeGreaterThan(0), { timeout: 10_000 });
          }
        }
        if (view.kind === "custom") {
          await waitFor(() => expect(container.querySelector('[data-view="custom"]')).not.toBeNull());
          expect(container.textContent).not.toContain("is not available");
        }
      }
      // Every pointer the manifest uses is carried by the recorded answers (a fault would throw into the
      // screen's boundary, which shows its message in place of the views).
      expect(screen.queryByText("This screen's manifest has a mistake")).toBeNull();
      expect(container.querySelector("[data-manifest-fault]")).toBeNull();
    }, 30_000);
  }
});
