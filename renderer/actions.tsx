// Actions (row, detail, toolbar, bulk, field items): navigate, or run a mutation after an optional
// confirmation and an optional input dialog; then a message, refreshes and an optional redirect.
// Shown, hidden and disabled by `visibleWhen`, `disabledWhen` and the one permission function.
import type CoreForm from "@rjsf/core";
import type { ErrorSchema } from "@rjsf/utils";
import { Button, Space } from "antd";
import {
  type ComponentProps,
  lazy,
  type ReactNode,
  Suspense,
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
} from "react";
import { useNavigate } from "react-router";
import { useData, useRefresh } from "./data.tsx";
import { useFeedback } from "./feedback.tsx";
import { withoutNulls } from "./form/fieldErrors.ts";
import { Hint } from "./Hint.tsx";
import { icon } from "./icons.tsx";
import { can, requiredRole, roleLabel } from "./permissions.ts";
import { evalPredicate, fillTemplate, getPointer, resolveValue, type Scope } from "./resolve.ts";
import { resolveSchemaRef } from "./schema.ts";
import type { Action, JsonSchema, ShowResult } from "./types.ts";
import { useOperationRun } from "./useOperationRun.ts";

const ActionDialogs = lazy(() => import("./ActionDialogs.tsx"));
// antd's Dropdown and Menu (~15 kB gzip) load when a row's "More actions" is first opened.
const ActionMenu = lazy(() => import("./ActionMenu.tsx"));

export interface ActionState {
  visible: boolean;
  enabled: boolean;
  reason?: string;
}

/** Whether an action shows and may run, for this viewer and subject (row or record). */
export function actionState(action: Action, role: string | undefined, subject: unknown, scope: Scope): ActionState {
  if (!evalPredicate(action.visibleWhen, subject, scope)) return { visible: false, enabled: false };
  const needed = requiredRole(action.role, Boolean(action.mutation));
  if (!can(role, needed)) return { visible: true, enabled: false, reason: `Needs the ${roleLabel(needed)} role` };
  if (action.disabledWhen && evalPredicate(action.disabledWhen, subject, scope))
    return { visible: true, enabled: false, reason: "Not available in this state" };
  return { visible: true, enabled: true };
}

/** A mutation's result shown once (a new key's secret) in a dialog. */
export interface ShownResult {
  spec: ShowResult;
  label: string;
  value: unknown;
  result: unknown;
}

export interface DialogState {
  action: Action;
  scope: Scope;
  schema: JsonSchema;
  formData: Record<string, unknown>;
  extraErrors?: ErrorSchema;
  formError?: string | null;
}

/**
 * Runs actions; returns `run(action, scope)` and the dialogs to render. One runner per group of
 * buttons keeps dialogs next to the buttons that open them.
 */
export function useActionRunner() {
  const { message, modal } = useFeedback();
  const navigate = useNavigate();
  const refresh = useRefresh();
  const { run: runOperation, running: busy } = useOperationRun();
  const { registry } = useData();
  const [dialog, setDialog] = useState<DialogState | null>(null);
  // Focus goes back to what opened a dialog when it closes, so keyboard users keep their place.
  const opener = useRef<HTMLElement | null>(null);
  const open = dialog !== null;
  useEffect(() => {
    if (open || !opener.current) return;
    if (opener.current.isConnected) opener.current.focus();
    opener.current = null;
  }, [open]);
  const [shown, setShown] = useState<ShownResult | null>(null);
  const formRef = useRef<CoreForm>(null);

  async function execute(action: Action, scope: Scope): Promise<boolean> {
    if (!action.mutation) return true;
    const outcome = await runOperation({
      operation: action.mutation,
      variables: action.variables,
      scope,
      schema: action.form ? resolveSchemaRef(registry.schemas, action.form.schema) : undefined,
      onSuccess: async (result) => {
        message.success(action.successMessage ?? `${action.label}: done`);
        if (action.showResult)
          setShown({
            spec: action.showResult,
            label: action.label,
            value: getPointer(result, action.showResult.field),
            result,
          });
        await refresh(action.refresh);
        if (action.redirect)
          navigate(fillTemplate(action.redirect, { ...result, ...(scope.form as object) }, true, scope));
      },
    });
    if (outcome.ok) return true;
    // In a dialog the errors stay beside its fields; otherwise they are a message.
    if (dialog || action.form) {
      const { extraErrors, formError } = outcome.errors;
      setDialog((current) => (current ? { ...current, extraErrors, formError } : current));
    } else message.error(outcome.errors.formError);
    return false;
  }

  function run(action: Action, scope: Scope) {
    if (action.to && !action.mutation) {
      navigate(fillTemplate(action.to, scope.row ?? scope.record ?? {}, true, scope));
      return;
    }
    if (action.form) {
      const schema = resolveSchemaRef(registry.schemas, action.form.schema);
      const initial = resolveValue(action.form.initial ?? {}, scope) as Record<string, unknown>;
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      setDialog({ action, scope, schema, formData: withoutNulls(initial) });
      return;
    }
    if (action.confirm) {
      modal.confirm({
        title: action.confirm.title,
        content: action.confirm.description
          ? fillTemplate(action.confirm.description, scope.row ?? scope.record, false, scope)
          : undefined,
        okText: action.confirm.okText ?? action.label,
        okButtonProps: { danger: action.confirm.danger },
        onOk: () => execute(action, scope),
      });
      return;
    }
    void execute(action, scope);
  }

  async function submitDialog(formData: Record<string, unknown>) {
    if (!dialog) return;
    const ok = await execute(dialog.action, { ...dialog.scope, form: formData });
    if (ok) setDialog(null);
  }

  // The dialogs' code (antd's Modal, the form library) loads when one first opens.
  const dialogs: ReactNode =
    dialog || shown ? (
      <Suspense fallback={null}>
        <ActionDialogs
          dialog={dialog}
          busy={busy}
          formRef={formRef}
          onFormChange={(formData) => setDialog((current) => (current ? { ...current, formData } : current))}
          onSubmit={submitDialog}
          onCancel={() => setDialog(null)}
          shown={shown}
          onCloseShown={() => setShown(null)}
        />
      </Suspense>
    ) : null;

  return {
    run,
    dialogs,
    busy,
  };
}

interface ActionsProps {
  actions: Action[] | undefined;
  /** The row or record the actions act on; predicates read it. */
  subject?: unknown;
  scope: Scope;
  /** `buttons` (detail, toolbar), `compact` (row: first button, the rest in a menu), `icon` (tiny). */
  mode?: "buttons" | "compact";
  size?: "small" | "middle";
}

/**
 * One action's button. In a row, an action with an icon is an icon button named by its label (tooltip
 * and aria-label), so tables keep their width for data. Why a disabled action is disabled is in its
 * tooltip for the eye and in a description a screen reader reads with the button.
 */
function ActionButton({
  action,
  state,
  iconOnly,
  type,
  size,
  onRun,
}: {
  action: Action;
  state: ActionState;
  iconOnly: boolean;
  type: "primary" | "text" | "default";
  size: "small" | "middle";
  onRun: () => void;
}) {
  const reasonId = useId();
  return (
    <span className="np-action">
      <Hint title={state.reason ?? (iconOnly ? action.label : undefined)}>
        <Button
          size={size}
          type={type}
          danger={action.danger || action.confirm?.danger}
          icon={icon(action.icon)}
          disabled={!state.enabled}
          aria-label={iconOnly ? action.label : undefined}
          aria-describedby={state.reason ? reasonId : undefined}
          onClick={(event) => {
            event.stopPropagation();
            onRun();
          }}
          data-action={action.id ?? action.label}
        >
          {iconOnly ? null : action.label}
        </Button>
      </Hint>
      {state.reason ? (
        <span id={reasonId} className="np-sr-only">
          {state.reason}
        </span>
      ) : null}
    </span>
  );
}

/** "More actions": the button alone until first opened, then the dropdown menu, open. */
function MoreActions({ entries, size, onRun }: Omit<ComponentProps<typeof ActionMenu>, "focusButton">) {
  const [asked, setAsked] = useState<{ focus: boolean } | null>(null);
  const more = (
    <Button
      size={size}
      type="text"
      icon={icon("more")}
      aria-label="More actions"
      aria-haspopup="menu"
      aria-expanded={false}
      onClick={(event) => setAsked({ focus: event.currentTarget === document.activeElement })}
    />
  );
  if (!asked) return more;
  return (
    <Suspense fallback={more}>
      <ActionMenu entries={entries} size={size} onRun={onRun} focusButton={asked.focus} />
    </Suspense>
  );
}

/** Renders a group of actions for one subject. */
export function Actions({ actions, subject, scope, mode = "buttons", size = "middle" }: ActionsProps) {
  const { viewer } = useData();
  const { run, dialogs } = useActionRunner();
  const states = useMemo(
    () =>
      (actions ?? [])
        .map((action) => ({ action, state: actionState(action, viewer.userRole, subject, scope) }))
        .filter(({ state }) => state.visible),
    [actions, viewer.userRole, subject, scope],
  );
  if (!states.length) return dialogs;

  const button = ({ action, state }: (typeof states)[number]) => (
    <ActionButton
      key={action.id ?? action.label}
      action={action}
      state={state}
      iconOnly={mode === "compact" && !action.primary && Boolean(icon(action.icon))}
      type={action.primary ? "primary" : mode === "compact" ? "text" : "default"}
      size={size}
      onRun={() => run(action, scope)}
    />
  );

  if (mode === "compact" && states.length > 2) {
    const [first, ...rest] = states;
    return (
      <Space size={4} onClick={(event) => event.stopPropagation()}>
        {button(first)}
        <MoreActions entries={rest} size={size} onRun={(action) => run(action, scope)} />
        {dialogs}
      </Space>
    );
  }
  return (
    <Space size={mode === "compact" ? 4 : 8} wrap={mode !== "compact"} onClick={(event) => event.stopPropagation()}>
      {states.map(button)}
      {dialogs}
    </Space>
  );
}
