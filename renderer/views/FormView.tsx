// The form view: an rjsf form from the entity schema the mutation's input is validated with on the
// server; optional initial data from a named query; server field errors beside their fields;
// success message, refreshes and a redirect filled from the mutation result, or the result shown
// once in place of the form (`submit.result`) with a button to the redirect.
import { Alert, Button, Card, Skeleton, Typography } from "antd";
import { Suspense, useEffect, useMemo, useState } from "react";
import { useNavigate } from "react-router";
import { useData, useOperation, useRefresh } from "../data.tsx";
import { manifestFault } from "../faults.tsx";
import { useFeedback } from "../feedback.tsx";
import { withoutNulls } from "../form/fieldErrors.ts";
import { SchemaForm } from "../form/SchemaForm.tsx";
import { useLeaveGuard } from "../leaveGuard.tsx";
import { can, requiredRole, roleLabel } from "../permissions.ts";
import { fillTemplate, getPath, resolveVariables, type Scope } from "../resolve.ts";
import { hasType, resolveSchemaRef } from "../schema.ts";
import type { FormView as FormViewSpec, JsonSchema } from "../types.ts";
import { errorMessage, FORM_AS_INPUT, useOperationRun } from "../useOperationRun.ts";
import { getWidget } from "../widgets/registry.ts";

type ResultSpec = NonNullable<NonNullable<FormViewSpec["submit"]>["result"]>;

/**
 * A mutation's result in place of the form: kept only in this component's state, so a value the
 * service returns once (a first token) is on screen until the viewer leaves, and never again.
 */
function FormResult({
  spec,
  result,
  redirect,
  scope,
}: {
  spec: ResultSpec;
  result: Record<string, unknown>;
  redirect: string | undefined;
  scope: Scope;
}) {
  const navigate = useNavigate();
  const Widget = getWidget(spec.widget)?.view;
  const record = getPath(result, spec.record);
  return (
    <Card
      data-view="form-result"
      title={spec.title ? fillTemplate(spec.title, record, false, scope) : undefined}
      style={{ maxWidth: 960 }}
    >
      {spec.description ? (
        <Typography.Paragraph type="secondary">
          {fillTemplate(spec.description, record, false, scope)}
        </Typography.Paragraph>
      ) : null}
      {Widget ? (
        <Suspense fallback={<Skeleton active />}>
          <Widget data={record} options={spec.options ?? {}} scope={scope} />
        </Suspense>
      ) : (
        manifestFault(`Unknown widget '${spec.widget}' for a form's result`)
      )}
      {redirect ? (
        <Button
          type="primary"
          style={{ marginTop: 16 }}
          onClick={() => navigate(fillTemplate(redirect, result, true, scope))}
        >
          {spec.continueLabel ?? "Continue"}
        </Button>
      ) : null}
    </Card>
  );
}

/** Whether a text field takes the empty text (no minimum length, no pattern, format or choices refusing it). */
function takesEmptyText(field: JsonSchema | undefined): boolean {
  if (!field || !hasType(field, "string") || field.format) return false;
  if (typeof field.minLength === "number" && field.minLength > 0) return false;
  if (Array.isArray(field.enum) && !field.enum.includes("")) return false;
  return typeof field.pattern !== "string" || new RegExp(field.pattern, "u").test("");
}

/**
 * An edit form's rules for the fields the record has a value in. An emptied field is left out of the
 * data (rjsf's empty value), and a left-out field is kept unchanged by the service: so a field that may
 * be null is sent as null to clear it, a text field that takes "" is sent as "" (a Telegram username),
 * and any other is required, instead of "Saved" changing nothing.
 */
function editRules(schema: JsonSchema, recordFields: readonly string[]) {
  const emptied = (key: string) =>
    hasType(schema.properties?.[key], "null") ? null : takesEmptyText(schema.properties?.[key]) ? "" : undefined;
  const clearable = recordFields.filter((key) => emptied(key) !== undefined);
  const kept = recordFields.filter((key) => !clearable.includes(key));
  return {
    schema: { ...schema, required: [...new Set([...(schema.required ?? []), ...kept])] },
    withClearedFields: (data: Record<string, unknown>) => ({
      ...Object.fromEntries(clearable.map((key) => [key, emptied(key)])),
      ...withoutNulls(data),
    }),
  };
}

/** `pageTitle`: the heading above the form; the card does not repeat a title equal to it. */
export function FormView({ view, scope, pageTitle }: { view: FormViewSpec; scope: Scope; pageTitle?: string }) {
  const { registry, viewer } = useData();
  const { message } = useFeedback();
  const navigate = useNavigate();
  const refresh = useRefresh();
  const schema = useMemo(() => resolveSchemaRef(registry.schemas, view.schema), [registry.schemas, view.schema]);
  const initialVariables = useMemo(() => resolveVariables(view.initial?.variables, scope), [view.initial, scope]);
  const initial = useOperation(view.initial?.query, initialVariables);
  // Fields of the form's schema that the mutation takes from elsewhere (`endpointId: "$route.endpointId"`)
  // start with that value, so a hidden required field is filled before validation.
  const seed = useMemo(() => {
    const fields = new Set(Object.keys(schema.properties ?? {}));
    const bound = Object.entries(view.variables ?? {}).filter(
      ([key, value]) => fields.has(key) && !(typeof value === "string" && value.startsWith("$form")),
    );
    return withoutNulls(resolveVariables(Object.fromEntries(bound), scope));
  }, [schema, view.variables, scope]);
  const [formData, setFormData] = useState<Record<string, unknown> | null>(view.initial ? null : seed);
  // The fields the edited record has a value in (none for a form that creates).
  const [recordFields, setRecordFields] = useState<readonly string[]>([]);
  const edit = useMemo(() => editRules(schema, recordFields), [schema, recordFields]);
  const { run, running: submitting, errors } = useOperationRun();
  const [generation, setGeneration] = useState(0);
  const [result, setResult] = useState<Record<string, unknown> | null>(null);
  // The data as it was when the user first touched the form (after the form filled its defaults),
  // and again after each save: the form is dirty while it differs.
  const [baseline, setBaseline] = useState<string | null>(null);
  const dirty = baseline !== null && formData !== null && JSON.stringify(formData) !== baseline;
  const releaseLeaveGuard = useLeaveGuard(dirty);
  const touched = () => {
    if (baseline === null && formData) setBaseline(JSON.stringify(formData));
  };
  const needed = requiredRole(view.role, true);
  const allowed = can(viewer.userRole, needed);

  useEffect(() => {
    if (!view.initial || !initial.data || formData) return;
    const record = (getPath(initial.data, view.initial.record) ?? {}) as Record<string, unknown>;
    const keys = Object.keys(schema.properties ?? {});
    const values = withoutNulls(Object.fromEntries(keys.map((key) => [key, record[key]])));
    setRecordFields(Object.keys(values));
    setFormData({ ...seed, ...values });
  }, [view.initial, initial.data, formData, schema, seed]);

  async function submit(data: Record<string, unknown>) {
    await run({
      operation: view.mutation,
      variables: view.variables ?? FORM_AS_INPUT,
      scope: { ...scope, form: edit.withClearedFields(data) },
      schema: edit.schema,
      onSuccess: async (result) => {
        setBaseline(null);
        message.success(view.submit?.successMessage ?? "Saved");
        await refresh([...(view.submit?.refresh ?? []), ...(view.initial ? [view.initial.query] : [])]);
        if (view.submit?.reset) {
          setFormData(seed);
          // A new form: the fields the user left are not in error just because they were emptied.
          setGeneration((current) => current + 1);
        }
        if (view.submit?.result) setResult(result);
        else if (view.submit?.redirect) {
          // Saved: the edits are not lost, so the redirect does not ask.
          releaseLeaveGuard();
          navigate(fillTemplate(view.submit.redirect, result, true, scope));
        }
      },
    });
  }

  if (result && view.submit?.result)
    return <FormResult spec={view.submit.result} result={result} redirect={view.submit.redirect} scope={scope} />;

  return (
    <Card
      data-view="form"
      title={(view.title ?? schema.title) === pageTitle ? undefined : (view.title ?? schema.title)}
      style={{ maxWidth: 720 }}
    >
      {view.description ? <Typography.Paragraph type="secondary">{view.description}</Typography.Paragraph> : null}
      {!allowed ? (
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 16 }}
          title={`Changing this needs the ${roleLabel(needed)} role.`}
        />
      ) : null}
      {initial.error ? <Alert type="error" showIcon title={errorMessage(initial.error)} /> : null}
      {formData ? (
        // Any key, click or input inside the form marks where the user's edits start (before they apply).
        <div onKeyDownCapture={touched} onMouseDownCapture={touched} onInputCapture={touched}>
          <SchemaForm
            key={generation}
            schema={edit.schema}
            uiSchema={view.uiSchema}
            formData={formData}
            onChange={setFormData}
            onSubmit={submit}
            extraErrors={errors.extraErrors}
            formError={errors.formError}
            disabled={!allowed}
            submitting={submitting}
            submitLabel={view.submit?.label}
          />
        </div>
      ) : (
        <Skeleton active />
      )}
    </Card>
  );
}
