// The `runner` custom view: a small form whose data runs a named query or mutation; the result paths
// the manifest names are shown below it with read widgets (JSON, numbers, tags …). Generic: e.g. test
// a piece of code on a sample input, or look something up. Its optional `save` is a second button that
// keeps what the form holds (tested code as a new version). Loaded lazily with the form library.
import type CoreForm from "@rjsf/core";
import { Alert, Button, Descriptions, Empty, Space, Typography } from "antd";
import { useMemo, useRef, useState } from "react";
import { useData, useRefresh } from "../data.tsx";
import { manifestFault } from "../faults.tsx";
import { useFeedback } from "../feedback.tsx";
import { withoutNulls } from "../form/fieldErrors.ts";
import { SchemaForm } from "../form/SchemaForm.tsx";
import { can, requiredRole } from "../permissions.ts";
import { getPath, resolveValue, type Scope } from "../resolve.ts";
import { resolveSchemaRef } from "../schema.ts";
import type { RunnerOptions, RunnerOutput } from "../types.ts";
import { FORM_AS_INPUT, useOperationRun } from "../useOperationRun.ts";
import { type CustomViewProps, getWidget } from "../widgets/registry.ts";

/** The read widget for an output: the manifest's, else json for objects and arrays, number, text. */
export function outputWidget(output: RunnerOutput, value: unknown): string {
  if (output.widget) return output.widget;
  if (value !== null && typeof value === "object") return "json";
  if (typeof value === "number") return "number";
  return "text";
}

export function runnerRole(options: RunnerOptions) {
  return requiredRole(options.role, Boolean(options.mutation));
}

/** The role the save button needs: its own, else ADMIN (it is a mutation). */
export function runnerSaveRole(save: NonNullable<RunnerOptions["save"]>) {
  return requiredRole(save.role, true);
}

export default function RunnerView({ data, options: raw, scope }: CustomViewProps) {
  const options = raw as unknown as RunnerOptions;
  const { registry, viewer } = useData();
  const refresh = useRefresh();
  const runScope = useMemo<Scope>(() => ({ ...scope, record: data }), [scope, data]);
  const schema = useMemo(() => resolveSchemaRef(registry.schemas, options.schema), [registry.schemas, options.schema]);
  const [formData, setFormData] = useState<Record<string, unknown>>(() =>
    withoutNulls((resolveValue(options.initial ?? {}, runScope) ?? {}) as Record<string, unknown>),
  );
  const { run, running, errors } = useOperationRun();
  const saving = useOperationRun();
  const { message } = useFeedback();
  const formRef = useRef<CoreForm>(null);
  // The form shows the errors of whichever of the two buttons was pressed last.
  const [lastPressed, setLastPressed] = useState<"run" | "save">("run");
  const [result, setResult] = useState<{ data: Record<string, unknown>; ms: number } | null>(null);
  const needed = runnerRole(options);
  const allowed = can(viewer.userRole, needed);
  const operation = options.mutation ?? options.query ?? "";
  const variables = options.variables ?? FORM_AS_INPUT;

  async function runWith(form: Record<string, unknown>) {
    setLastPressed("run");
    const started = performance.now();
    const outcome = await run({
      operation,
      variables,
      scope: { ...runScope, form },
      schema,
      onSuccess: async (answer) => {
        setResult({ data: answer, ms: Math.round(performance.now() - started) });
        if (options.refresh?.length) await refresh(options.refresh);
      },
    });
    if (!outcome.ok) setResult(null);
  }

  const save = options.save;
  const saveAllowed = save ? can(viewer.userRole, runnerSaveRole(save)) : false;
  async function saveForm() {
    if (!save || !formRef.current?.validateForm()) return;
    setLastPressed("save");
    await saving.run({
      operation: save.mutation,
      variables: save.variables ?? FORM_AS_INPUT,
      scope: { ...runScope, form: formData },
      schema,
      onSuccess: async () => {
        message.success(save.successMessage ?? "Saved");
        if (save.refresh?.length) await refresh(save.refresh);
      },
    });
  }
  const shownErrors = lastPressed === "save" ? saving.errors : errors;

  const outputs: RunnerOutput[] = options.outputs?.length ? options.outputs : [{ path: "", label: "Result" }];
  return (
    <div className="np-runner" data-widget="runner">
      {!allowed ? (
        <Alert type="info" showIcon style={{ marginBottom: 16 }} title={`Running this needs the ${needed} role.`} />
      ) : null}
      <SchemaForm
        formRef={formRef}
        schema={schema}
        uiSchema={options.uiSchema}
        formData={formData}
        onChange={setFormData}
        onSubmit={runWith}
        extraErrors={shownErrors.extraErrors}
        formError={shownErrors.formError}
        disabled={!allowed}
        submitting={running || saving.running}
        submitLabel={options.submitLabel ?? "Run"}
        hideSubmit={Boolean(save)}
      />
      {save ? (
        <Space className="np-runner-buttons" wrap>
          <Button
            type="primary"
            loading={running}
            disabled={!allowed || saving.running}
            onClick={() => formRef.current?.submit()}
          >
            {options.submitLabel ?? "Run"}
          </Button>
          <Button
            loading={saving.running}
            disabled={!saveAllowed || running}
            title={saveAllowed ? undefined : `Saving needs the ${runnerSaveRole(save)} role.`}
            onClick={saveForm}
          >
            {save.label}
          </Button>
        </Space>
      ) : null}
      <div className="np-runner-result" aria-live="polite">
        {result ? (
          <>
            {/* The console's wait, not a run's duration: an output may show that, and the two differ. */}
            <Typography.Text type="secondary" style={{ fontSize: 12 }}>
              Round trip: {result.ms} ms
            </Typography.Text>
            <Descriptions
              bordered
              size="small"
              column={1}
              styles={{ label: { width: 160 } }}
              items={outputs.map((output) => {
                const value = getPath(result.data, output.path);
                const name = outputWidget(output, value);
                const Read = getWidget(name)?.read;
                const schema = output.schema ? resolveSchemaRef(registry.schemas, output.schema) : undefined;
                return {
                  key: output.path || "result",
                  label: output.label ?? output.path,
                  children: Read ? (
                    <Read value={value} schema={schema} options={output.options ?? {}} record={result.data} />
                  ) : (
                    manifestFault(`Unknown widget '${name}' for the output ${output.path}`)
                  ),
                };
              })}
            />
          </>
        ) : (
          <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="Run it to see the result here." />
        )}
      </div>
    </div>
  );
}
