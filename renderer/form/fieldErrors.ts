// Form helpers without rjsf, so list and detail screens can map errors and prepare data without
// loading the form library (it is loaded only when a form or a dialog opens).
import type { ErrorSchema } from "@rjsf/utils";
import type { FieldError } from "../transport.ts";
import type { JsonSchema, Variables } from "../types.ts";

/** What rjsf widgets of our registry read from `formContext`. */
export interface FormContext {
  formData: Record<string, unknown>;
  /** rjsf's antd theme: whether a section title ends in a colon. */
  colon?: boolean;
}

/** The `$form.…` references nested inside a variables mapping, each with the path of keys leading to it. */
function nestedFormReferences(value: unknown, path: string[], out: { path: string[]; form: string[] }[]) {
  if (typeof value === "string" && value.startsWith("$form.") && path.length > 1)
    out.push({ path, form: value.slice(6).split(".") });
  else if (value && typeof value === "object" && !Array.isArray(value))
    for (const [key, entry] of Object.entries(value)) nestedFormReferences(entry, [...path, key], out);
}

const startsWith = (parts: string[], prefix: string[]) => prefix.every((part, i) => parts[i] === part);

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
  const nested: { path: string[]; form: string[] }[] = [];
  nestedFormReferences(mapping, [], nested);
  for (const { pointer, message } of fields) {
    const parts = pointer.split("/").slice(1);
    let target: string[] | null = null;
    for (const [argument, source] of Object.entries(mapping)) {
      if (source === "$form") target = parts[0] === argument ? parts.slice(1) : (target ?? parts);
      else if (typeof source === "string" && source.startsWith("$form.") && parts[0] === argument)
        target = [...source.slice(6).split("."), ...parts.slice(1)];
    }
    // A form field placed inside an argument ({ input: { note: "$form.note" } }): the pointer names it
    // from the argument (/input/note) or, as the service's input pointers do, from inside it (/note).
    for (const ref of nested) {
      if (target) break;
      const prefix = [ref.path, ref.path.slice(1)].find((candidate) => startsWith(parts, candidate));
      if (prefix) target = [...ref.form, ...parts.slice(prefix.length)];
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
