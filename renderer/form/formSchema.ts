// The schema a form validates with, and the key of its precompiled validator: one place for both, read by
// the form (SchemaForm, precompiled.ts) and by the generator that compiles the validators.
import { hashForSchema, type RJSFSchema } from "@rjsf/utils";
import type { JsonSchema } from "../types.ts";

/** The form's schema: the card or dialog around the form already shows the schema's title. */
export function formSchemaOf(schema: JsonSchema): RJSFSchema {
  return { ...schema, title: undefined, description: undefined } as RJSFSchema;
}

/**
 * The key of a form schema's validator: its hash without its own `required`, which an edit form extends
 * with the fields the record has a value in (renderer/views/FormView.tsx), so one validator serves both.
 */
export function formValidatorKey(schema: RJSFSchema): string {
  const { required: _required, ...rest } = schema;
  return hashForSchema(rest);
}
