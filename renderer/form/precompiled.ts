// The forms' validator without run-time compilation: rjsf's precompiled validator over the code
// `npm run generate` made from the entity schemas (schemas/generated/form-validators.ts), so the
// console runs no `new Function` and its CSP needs no 'unsafe-eval'.
import { hashForSchema, type RJSFSchema, type ValidatorType } from "@rjsf/utils";
import runtimeValidator, { type ValidatorFunctions } from "@rjsf/validator-ajv8";
// The module itself, not the package's index: the index brings ajv's compiler, which is what this avoids.
import createPrecompiledValidator from "@rjsf/validator-ajv8/lib/createPrecompiledValidator.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import { conditionValidators, formValidators } from "../../schemas/generated/form-validators.ts";
import { formValidatorKey } from "./formSchema.ts";

/** A missing property's error, as ajv words the `required` keyword. */
const missingError = (name: string): ErrorObject => ({
  instancePath: "",
  schemaPath: "#/required",
  keyword: "required",
  params: { missingProperty: name },
  message: `must have required property '${name}'`,
});

/**
 * `validate` with more required properties: an edit form's schema requires the fields the record has a
 * value in. Their errors stand where ajv reports `required`: before those of the properties.
 */
function withRequired(validate: ValidateFunction, names: string[]): ValidateFunction {
  const composed = ((data: unknown) => {
    validate(data);
    const record = data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : null;
    const missing = record ? names.filter((name) => record[name] === undefined).map(missingError) : [];
    const errors = [...(validate.errors ?? [])];
    const at = errors.findIndex((error) => error.schemaPath.startsWith("#/properties/"));
    errors.splice(at === -1 ? errors.length : at, 0, ...missing);
    composed.errors = errors.length ? errors : null;
    return errors.length === 0;
  }) as ValidateFunction;
  return composed;
}

const cache = new WeakMap<RJSFSchema, ValidatorType>();

/**
 * The validator of a form schema. A schema no manifest names (so `npm run generate` compiled nothing for
 * it) fails loudly: a form that cannot validate must not submit unchecked. Only the renderer's own
 * tests, which draw forms of schemas of their own, compile one at run time (a build leaves that branch,
 * and ajv's compiler, out).
 */
export function formValidator(schema: RJSFSchema): ValidatorType {
  const kept = cache.get(schema);
  if (kept) return kept;
  const compiled = formValidators[formValidatorKey(schema)];
  if (!compiled && process.env.NODE_ENV === "test") return runtimeValidator;
  if (!compiled)
    throw new Error(
      "This form's schema has no precompiled validator: run npm run generate after changing a form or entity schema.",
    );
  const extra = (schema.required ?? []).filter((name) => !compiled.required.includes(name));
  const validate = extra.length ? withRequired(compiled.validate, extra) : compiled.validate;
  const functions: ValidatorFunctions = { ...conditionValidators, [hashForSchema(schema)]: validate };
  const validator = createPrecompiledValidator(functions, schema);
  cache.set(schema, validator);
  return validator;
}
