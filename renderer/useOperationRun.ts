// Running a named operation on the viewer's behalf and turning its failure into what a form shows:
// the one path every action, form view, runner view and bulk action takes. No rjsf here, so lists and
// detail screens use it without loading the form library.
import type { ErrorSchema } from "@rjsf/utils";
import { useCallback, useState } from "react";
import { useRunOperation } from "./data.tsx";
import { mapFieldErrors } from "./form/fieldErrors.ts";
import { resolveVariables, type Scope } from "./resolve.ts";
import { GqlError } from "./transport.ts";
import type { JsonSchema, Variables } from "./types.ts";

/** A user-facing sentence for an error from the service. */
export function errorMessage(error: unknown): string {
  if (error instanceof GqlError) {
    if (error.code === "FORBIDDEN") return "You do not have permission to do this.";
    if (error.code === "RATE_LIMITED") return error.message || "Too many attempts. Try again shortly.";
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** What a form shows of a failed run: errors beside the fields they name, the rest above the form. */
export interface FormErrors {
  extraErrors?: ErrorSchema;
  formError: string | null;
}

export const NO_FORM_ERRORS: FormErrors = { extraErrors: undefined, formError: null };

/** The default mapping of a form's data to an operation's variables. */
export const FORM_AS_INPUT: Variables = { input: "$form" };

/**
 * A failed run as a form shows it. With a form schema, the service's field errors go beside the fields
 * the variables fed (those matching no field go above the form); otherwise the whole error goes above.
 */
export function formErrors(
  error: unknown,
  variables: Variables | undefined,
  schema: JsonSchema | undefined,
): FormErrors {
  const fields = error instanceof GqlError ? error.fields : [];
  if (schema && fields.length) {
    const mapped = mapFieldErrors(fields, variables, schema);
    return { extraErrors: mapped.extraErrors, formError: mapped.unmatched.join(" ") || null };
  }
  return { extraErrors: undefined, formError: errorMessage(error) };
}

export interface OperationRequest {
  operation: string;
  /** How the scope becomes the operation's variables (`$form`, `$row.id` …). */
  variables: Variables | undefined;
  scope: Scope;
  /** The form's schema, when a form fed the variables: field errors are placed on its fields. */
  schema?: JsonSchema;
  /** What to do with the result before the run counts as done (messages, refreshes, a redirect). */
  onSuccess?: (data: Record<string, unknown>) => Promise<void> | void;
}

export type OperationOutcome =
  | { ok: true; data: Record<string, unknown> }
  | { ok: false; error: unknown; errors: FormErrors };

/**
 * Runs named operations: `running` while one is in flight (through its onSuccess), `errors` of the
 * last failed run for a form to show, cleared when the next run starts.
 */
export function useOperationRun() {
  const runOperation = useRunOperation();
  const [running, setRunning] = useState(false);
  const [errors, setErrors] = useState<FormErrors>(NO_FORM_ERRORS);

  const run = useCallback(
    async ({ operation, variables, scope, schema, onSuccess }: OperationRequest): Promise<OperationOutcome> => {
      setRunning(true);
      setErrors(NO_FORM_ERRORS);
      try {
        const data = await runOperation(operation, resolveVariables(variables, scope));
        await onSuccess?.(data);
        return { ok: true, data };
      } catch (error) {
        const mapped = formErrors(error, variables, schema);
        setErrors(mapped);
        return { ok: false, error, errors: mapped };
      } finally {
        setRunning(false);
      }
    },
    [runOperation],
  );

  return { run, running, errors };
}
