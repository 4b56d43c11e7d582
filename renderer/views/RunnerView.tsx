// The `runner` custom view: a small form whose data runs a named query or mutation; the result paths
// the manifest names are shown below it with read widgets (JSON, numbers, tags …). Generic: e.g. test
// a piece of code on a sample input, or look something up. Loaded lazily with the form library.
import { Alert, Descriptions, Empty, Typography } from "antd";
import { useMemo, useState } from "react";
import { useData, useRefresh } from "../data.tsx";
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
  const [result, setResult] = useState<{ data: Record<string, unknown>; ms: number } | null>(null);
  const needed = runnerRole(options);
  const allowed = can(viewer.userRole, needed);
  const operation = options.mutation ?? options.query ?? "";
  const variables = options.variables ?? FORM_AS_INPUT;

  async function runWith(form: Record<string, unknown>) {
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

  const outputs: RunnerOutput[] = options.outputs?.length ? options.outputs : [{ path: "", label: "Result" }];
  return (
    <div className="np-runner" data-widget="runner">
      {!allowed ? (
        <Alert type="info" showIcon style={{ marginBottom: 16 }} title={`Running this needs the ${needed} role.`} />
      ) : null}
      <SchemaForm
        schema={schema}
        uiSchema={options.uiSchema}
        formData={formData}
        onChange={setFormData}
        onSubmit={runWith}
        extraErrors={errors.extraErrors}
        formError={errors.formError}
        disabled={!allowed}
        submitting={running}
        submitLabel={options.submitLabel ?? "Run"}
      />
      <div className="np-runner-result" aria-live="polite">
        {result ? (
          <>
            <Typography.Text type="secondary" style={{ fontSize: 12 }}>
              Ran in {result.ms} ms
            </Typography.Text>
            <Descriptions
              bordered
              size="small"
              column={1}
              styles={{ label: { width: 160 } }}
              items={outputs.map((output) => {
                const value = getPath(result.data, output.path);
                const Read = getWidget(outputWidget(output, value))?.read ?? getWidget("text")?.read;
                return {
                  key: output.path || "result",
                  label: output.label ?? output.path,
                  children: Read ? <Read value={value} options={output.options ?? {}} record={result.data} /> : null,
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
