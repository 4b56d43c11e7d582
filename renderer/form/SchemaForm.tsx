// The one rjsf form every form view and action dialog uses: antd theme, ajv validation with the
// same entity schema the server validates with (compiled ahead, precompiled.ts), validation on submit
// and blur, server field errors beside their fields, and the registry's edit widgets (e.g. remote-options).

import RjsfForm from "@rjsf/antd";
import type CoreForm from "@rjsf/core";
import {
  type ErrorSchema,
  getDefaultFormState,
  mergeObjects,
  type RJSFValidationError,
  type UiSchema,
} from "@rjsf/utils";
import { Alert } from "antd";
import { type Ref, type RefObject, useEffect, useMemo, useRef, useState } from "react";
import { withEnumNames } from "../schema.ts";
import type { JsonSchema } from "../types.ts";
import { editWidgets } from "../widgets/registry.ts";
import { EnumSelect } from "./EnumSelect.tsx";
import { FieldTemplate } from "./FieldTemplate.tsx";
import type { FormContext } from "./fieldErrors.ts";
import { formSchemaOf } from "./formSchema.ts";
import { KeyValueField } from "./KeyValueField.tsx";
import { formValidator } from "./precompiled.ts";

export { type FormContext, mapFieldErrors, withoutNulls } from "./fieldErrors.ts";

/** Short messages for ajv's keywords; the field label is already beside the message. */
export function transformErrors(errors: RJSFValidationError[]): RJSFValidationError[] {
  // A refused name yields a propertyNames error and the inner keyword's error about the name: one is
  // enough. An `if` error ('must match "then" schema') only repeats that an error inside `then` exists.
  const shown = errors.filter((error) => error.name !== "if" && !error.schemaPath?.includes("/propertyNames/"));
  return shown.map((error) => {
    const params = (error.params ?? {}) as Record<string, unknown>;
    switch (error.name) {
      case "required":
        return { ...error, message: "This field is required" };
      case "minLength":
        return {
          ...error,
          message: params.limit === 1 ? "This field is required" : `Use at least ${params.limit} characters`,
        };
      case "maxLength":
        return { ...error, message: `Use at most ${params.limit} characters` };
      case "pattern":
        return { ...error, message: "Contains characters that are not allowed" };
      case "propertyNames":
        return { ...error, message: "A name contains characters that are not allowed" };
      case "format":
        return { ...error, message: `Enter a valid ${String(params.format).replace("-", " ")}` };
      case "minItems":
        return { ...error, message: params.limit === 1 ? "Add at least one" : `Add at least ${params.limit}` };
      case "maxItems":
        return { ...error, message: `Use at most ${params.limit}` };
      case "enum":
        return { ...error, message: "Choose one of the options" };
      case "minimum":
        return { ...error, message: `Use ${params.limit} or more` };
      case "maximum":
        return { ...error, message: `Use ${params.limit} or less` };
      case "type":
        return params.type === "integer" ? { ...error, message: "Enter a whole number" } : error;
      default:
        return error;
    }
  });
}

export interface SchemaFormProps {
  schema: JsonSchema;
  uiSchema?: Record<string, unknown>;
  formData: Record<string, unknown>;
  onChange: (data: Record<string, unknown>) => void;
  onSubmit: (data: Record<string, unknown>) => void;
  extraErrors?: ErrorSchema;
  formError?: string | null;
  disabled?: boolean;
  submitting?: boolean;
  submitLabel?: string;
  /** Hide rjsf's own button when a dialog submits through `formRef`. */
  hideSubmit?: boolean;
  formRef?: Ref<CoreForm>;
}

export default SchemaForm;

// Fields the renderer provides by name (`ui:field`), beside the registry's edit widgets (`ui:widget`).
export const formFields = { "key-value": KeyValueField };
const formTemplates = { FieldTemplate };

const ARRAY_DEFAULTS = { arrayMinItems: { populate: "never" as const } };

/** The errors of the fields whose ids (rjsf's `root_a_b`) were touched, from a whole-form error schema. */
function touchedErrors(errors: ErrorSchema, touched: ReadonlySet<string>, id = "root"): ErrorSchema | undefined {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(errors as Record<string, unknown>)) {
    if (key === "__errors") {
      if (touched.has(id) && Array.isArray(value) && value.length) out.__errors = value;
    } else if (value && typeof value === "object") {
      const inner = touchedErrors(value as ErrorSchema, touched, `${id}_${key}`);
      if (inner) out[key] = inner;
    }
  }
  return Object.keys(out).length ? (out as ErrorSchema) : undefined;
}

/** rjsf's ids (`root_a_b`) of the fields an error schema names. */
function errorFieldIds(errors: ErrorSchema, id = "root", out = new Set<string>()): Set<string> {
  for (const [key, value] of Object.entries(errors as Record<string, unknown>)) {
    if (key === "__errors") {
      if (Array.isArray(value) && value.length) out.add(id);
    } else if (value && typeof value === "object") errorFieldIds(value as ErrorSchema, `${id}_${key}`, out);
  }
  return out;
}

/**
 * Brings the service's refusal where the user looks: its first field (in the form's order) into view
 * and focus, else the error above the form. rjsf's focusOnFirstError covers only its own validation,
 * and a long form is submitted from its bottom, far from the field the service refused.
 */
function useRevealServiceErrors(
  container: RefObject<HTMLDivElement | null>,
  extraErrors: ErrorSchema | undefined,
  formError: string | null | undefined,
) {
  useEffect(() => {
    const root = container.current;
    if (!root || (!extraErrors && !formError)) return;
    const ids = extraErrors ? errorFieldIds(extraErrors) : new Set<string>();
    const field = [...root.querySelectorAll<HTMLElement>("[id^='root']")].find((element) => ids.has(element.id));
    const target = field ?? (formError ? root.querySelector<HTMLElement>("[role='alert']") : null);
    target?.scrollIntoView?.({ block: "center" });
    field?.focus({ preventScroll: true });
  }, [container, extraErrors, formError]);
}

export function SchemaForm(props: SchemaFormProps) {
  const container = useRef<HTMLDivElement>(null);
  useRevealServiceErrors(container, props.extraErrors, props.formError);
  const widgets = useMemo(() => ({ SelectWidget: EnumSelect, ...editWidgets() }), []);
  // Until the first submit, only the fields the user has left show their errors (not every empty
  // required field at the first blur); from then on the whole form validates on blur.
  const [touched, setTouched] = useState<ReadonlySet<string>>(() => new Set());
  const [submitted, setSubmitted] = useState(false);
  const uiSchema = useMemo<UiSchema>(
    () => ({
      ...withEnumNames(props.schema, props.uiSchema),
      "ui:submitButtonOptions": props.hideSubmit
        ? { norender: true }
        : {
            submitText: props.submitLabel ?? "Save",
            props: { type: "primary", loading: props.submitting, disabled: props.disabled },
          },
    }),
    [props.schema, props.uiSchema, props.hideSubmit, props.submitLabel, props.submitting, props.disabled],
  );
  const formSchema = useMemo(() => formSchemaOf(props.schema), [props.schema]);
  const validator = useMemo(() => formValidator(formSchema), [formSchema]);
  const formContext = useMemo<FormContext>(() => ({ formData: props.formData, colon: false }), [props.formData]);
  const earlyErrors = useMemo(() => {
    if (submitted || touched.size === 0) return undefined;
    const data = getDefaultFormState(validator, formSchema, props.formData, formSchema, false, ARRAY_DEFAULTS);
    const { errorSchema } = validator.validateFormData(data, formSchema, undefined, transformErrors, uiSchema);
    return touchedErrors(errorSchema, touched);
  }, [submitted, touched, props.formData, formSchema, uiSchema, validator]);
  // Both kinds side by side: messages of one field are concatenated.
  const extraErrors = useMemo(
    () =>
      props.extraErrors && earlyErrors
        ? (mergeObjects(props.extraErrors, earlyErrors, true) as ErrorSchema)
        : (props.extraErrors ?? earlyErrors),
    [props.extraErrors, earlyErrors],
  );
  return (
    <div className="np-schema-form" ref={container}>
      {props.formError ? <Alert type="error" showIcon title={props.formError} style={{ marginBottom: 16 }} /> : null}
      <RjsfForm
        ref={props.formRef}
        schema={formSchema}
        uiSchema={uiSchema}
        formData={props.formData}
        formContext={formContext}
        validator={validator}
        widgets={widgets}
        fields={formFields}
        templates={formTemplates}
        noHtml5Validate
        // No placeholder items for an array's minItems: an empty item is not a value, and it would be
        // reported as "must be string" rather than as a missing value.
        experimental_defaultFormStateBehavior={ARRAY_DEFAULTS}
        showErrorList={false}
        focusOnFirstError
        liveValidate={submitted ? "onBlur" : undefined}
        onBlur={(id) => setTouched((current) => (current.has(id) ? current : new Set(current).add(id)))}
        transformErrors={transformErrors}
        extraErrors={extraErrors}
        disabled={props.disabled || props.submitting}
        onChange={(event) => props.onChange(event.formData as Record<string, unknown>)}
        onError={() => setSubmitted(true)}
        onSubmit={(event) => {
          setSubmitted(true);
          props.onSubmit(event.formData as Record<string, unknown>);
        }}
      />
    </div>
  );
}
