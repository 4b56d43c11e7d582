// The one rjsf form every form view and action dialog uses: antd theme, ajv validation with the
// same entity schema the server validates with, validation on submit and blur, server field errors
// beside their fields, and the registry's edit widgets (e.g. remote-options).
import RjsfForm from "@rjsf/antd";
import type CoreForm from "@rjsf/core";
import type { ErrorSchema, RJSFSchema, RJSFValidationError, UiSchema } from "@rjsf/utils";
import validator from "@rjsf/validator-ajv8";
import { Alert } from "antd";
import { type Ref, useMemo, useState } from "react";
import type { FieldError } from "../data.tsx";
import type { JsonSchema, Variables } from "../types.ts";
import { editWidgets } from "../widgets/registry.ts";

export interface FormContext {
  formData: Record<string, unknown>;
}

/** Short messages for ajv's keywords; the field label is already beside the message. */
export function transformErrors(errors: RJSFValidationError[]): RJSFValidationError[] {
  return errors.map((error) => {
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
      case "format":
        return { ...error, message: `Enter a valid ${String(params.format).replace("-", " ")}` };
      case "enum":
        return { ...error, message: "Choose one of the options" };
      default:
        return error;
    }
  });
}

/**
 * Maps server field errors to rjsf `extraErrors`. Pointers are relative to the mutation's input
 * object or name a scalar argument; `variables` (how form data became the arguments) is inverted so
 * `/label` lands on the form field that `$form.label` fed. Errors that match no field are returned apart.
 */
export function mapFieldErrors(
  fields: FieldError[],
  variables: Variables | undefined,
  schema: JsonSchema,
): { extraErrors: ErrorSchema; unmatched: string[] } {
  const extraErrors: Record<string, unknown> = {};
  const unmatched: string[] = [];
  const mapping = variables ?? { input: "$form" };
  for (const { pointer, message } of fields) {
    const parts = pointer.split("/").slice(1);
    let target: string[] | null = null;
    for (const [argument, source] of Object.entries(mapping)) {
      if (source === "$form") target = parts[0] === argument ? parts.slice(1) : (target ?? parts);
      else if (typeof source === "string" && source.startsWith("$form.") && parts[0] === argument)
        target = [...source.slice(6).split("."), ...parts.slice(1)];
    }
    const key = target?.[0];
    if (!target || !key || !schema.properties?.[key]) {
      unmatched.push(message);
      continue;
    }
    let node = extraErrors;
    for (const part of target) {
      node[part] = node[part] ?? {};
      node = node[part] as Record<string, unknown>;
    }
    node.__errors = [...((node.__errors as string[]) ?? []), message];
  }
  return { extraErrors: extraErrors as ErrorSchema, unmatched };
}

/** Drops nulls so optional fields start empty instead of failing a `type: string` check. */
export function withoutNulls(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== null && value !== undefined));
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

export function SchemaForm(props: SchemaFormProps) {
  const widgets = useMemo(() => editWidgets(), []);
  const [blurred, setBlurred] = useState(false);
  const uiSchema = useMemo<UiSchema>(
    () => ({
      ...props.uiSchema,
      "ui:submitButtonOptions": props.hideSubmit
        ? { norender: true }
        : {
            submitText: props.submitLabel ?? "Save",
            props: { type: "primary", loading: props.submitting, disabled: props.disabled },
          },
    }),
    [props.uiSchema, props.hideSubmit, props.submitLabel, props.submitting, props.disabled],
  );
  // The card or dialog around the form already shows the schema's title.
  const formSchema = useMemo(
    () => ({ ...props.schema, title: undefined, description: undefined }) as RJSFSchema,
    [props.schema],
  );
  const formContext = useMemo<FormContext>(() => ({ formData: props.formData }), [props.formData]);
  return (
    <div className="np-schema-form">
      {props.formError ? <Alert type="error" showIcon title={props.formError} style={{ marginBottom: 16 }} /> : null}
      <RjsfForm
        ref={props.formRef}
        schema={formSchema}
        uiSchema={uiSchema}
        formData={props.formData}
        formContext={formContext}
        validator={validator}
        widgets={widgets}
        noHtml5Validate
        showErrorList={false}
        liveValidate={blurred ? "onBlur" : undefined}
        onBlur={() => setBlurred(true)}
        transformErrors={transformErrors}
        extraErrors={props.extraErrors}
        disabled={props.disabled || props.submitting}
        onChange={(event) => props.onChange(event.formData as Record<string, unknown>)}
        onSubmit={(event) => props.onSubmit(event.formData as Record<string, unknown>)}
      />
    </div>
  );
}
