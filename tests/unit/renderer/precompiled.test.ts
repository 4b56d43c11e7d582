// The forms' precompiled validators (schemas/generated/form-validators.ts, no eval in the browser) find
// the same errors as rjsf's run-time ajv validator did, for every form schema a manifest names.
import { getDefaultFormState, type RJSFSchema } from "@rjsf/utils";
import runtimeValidator from "@rjsf/validator-ajv8";
import { afterEach, describe, expect, it, vi } from "vitest";
import { formSchemaOf } from "../../../renderer/form/formSchema.ts";
import { formValidator } from "../../../renderer/form/precompiled.ts";
import { resolveSchemaRef } from "../../../renderer/schema.ts";
import type { JsonSchema } from "../../../renderer/types.ts";
import { formSchemaRefs } from "../../../scripts/generate/form-validators.ts";
import { loadEntitySchemas } from "../../../server/platform/validation.ts";

const entities = loadEntitySchemas() as Record<string, JsonSchema>;

/** Data that breaks every property of a schema: a value of another type for each. */
function wrongTypes(schema: RJSFSchema): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([key, property]) => {
      const type = typeof property === "object" ? property.type : undefined;
      return [key, type === "string" || (Array.isArray(type) && type.includes("string")) ? 12 : "x".repeat(300)];
    }),
  );
}

const found = (errors: { property?: string; name?: string }[]) =>
  errors.map((error) => `${error.property} ${error.name}`).sort();

describe("the forms' precompiled validators", () => {
  afterEach(() => vi.unstubAllEnvs());

  for (const ref of formSchemaRefs())
    it(`find what ajv at run time finds: ${ref}`, () => {
      const schema = formSchemaOf(resolveSchemaRef(entities, ref));
      const validator = formValidator(schema);
      for (const data of [{}, getDefaultFormState(runtimeValidator, schema, {}, schema), wrongTypes(schema)]) {
        const precompiled = validator.validateFormData(data, schema);
        const runtime = runtimeValidator.validateFormData(data, schema);
        expect(found(precompiled.errors), JSON.stringify(data)).toEqual(found(runtime.errors));
      }
    });

  it("require what an edit form adds to its schema's required, as ajv would", () => {
    const base = formSchemaOf(resolveSchemaRef(entities, "stream#/$defs/updateInput"));
    const schema = { ...base, required: [...(base.required ?? []), "name", "filterFunction"] };
    const data = { id: "s1", name: undefined, destinationAttributes: 3 };
    const precompiled = formValidator(schema).validateFormData(data, schema);
    const runtime = runtimeValidator.validateFormData(data, schema);
    // In ajv's order too: the form focuses the first.
    const inOrder = (errors: { property?: string; name?: string }[]) => errors.map((e) => `${e.property} ${e.name}`);
    expect(inOrder(precompiled.errors)).toEqual(inOrder(runtime.errors));
    expect(inOrder(precompiled.errors)).toEqual([
      "name required",
      "filterFunction required",
      ".destinationAttributes type",
    ]);
  });

  it("fail loudly for a schema no manifest names, but in the renderer's tests", () => {
    vi.stubEnv("NODE_ENV", "production");
    expect(() => formValidator({ type: "object", properties: { unnamed: { type: "string" } } })).toThrow(
      /no precompiled validator: run npm run generate/,
    );
  });
});
