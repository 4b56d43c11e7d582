// The dialogs of actions (renderer/actions.tsx): an action's input form, and a result shown once.
// Loaded when the first one opens, with antd's Modal; the form library loads with the first form.
import type CoreForm from "@rjsf/core";
import { Button, Modal, Skeleton } from "antd";
import { lazy, type ReactNode, type RefObject, Suspense, useEffect, useRef } from "react";
import type { DialogState, ShownResult } from "./actions.tsx";
import { fillTemplate } from "./resolve.ts";
import { getWidget } from "./widgets/registry.ts";

// rjsf and ajv load only when a dialog with a form opens.
const SchemaForm = lazy(() => import("./form/SchemaForm.tsx"));

const FIELD_SELECTOR =
  "input:not([type=hidden]):not([disabled]), textarea:not([disabled]), select:not([disabled]), [role=combobox]";

/** Focuses the first field inside once it renders (a dialog's form loads lazily), after the dialog's own focus. */
function FocusFirstField({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const root = ref.current;
    if (!root) return;
    let frame = 0;
    const tryFocus = () => {
      const field = root.querySelector<HTMLElement>(FIELD_SELECTOR);
      if (!field) return false;
      frame = requestAnimationFrame(() => field.focus());
      return true;
    };
    if (tryFocus()) return () => cancelAnimationFrame(frame);
    const observer = new MutationObserver(() => {
      if (tryFocus()) observer.disconnect();
    });
    observer.observe(root, { childList: true, subtree: true });
    return () => {
      observer.disconnect();
      cancelAnimationFrame(frame);
    };
  }, []);
  return <div ref={ref}>{children}</div>;
}

export default function ActionDialogs({
  dialog,
  busy,
  formRef,
  onFormChange,
  onSubmit,
  onCancel,
  shown,
  onCloseShown,
}: {
  dialog: DialogState | null;
  busy: boolean;
  formRef: RefObject<CoreForm | null>;
  onFormChange: (formData: Record<string, unknown>) => void;
  onSubmit: (formData: Record<string, unknown>) => void;
  onCancel: () => void;
  shown: ShownResult | null;
  onCloseShown: () => void;
}) {
  const ResultView = shown
    ? (getWidget(shown.spec.widget ?? "secret-once")?.read ?? getWidget("json")?.read)
    : undefined;
  return (
    <>
      {dialog ? (
        <Modal
          open
          title={dialog.action.form?.title ?? dialog.schema.title ?? dialog.action.label}
          okText={dialog.action.confirm?.okText ?? dialog.action.label}
          okButtonProps={{ danger: dialog.action.confirm?.danger, loading: busy }}
          onOk={() => formRef.current?.submit()}
          onCancel={onCancel}
          destroyOnHidden
        >
          {dialog.action.confirm?.description ? <p>{dialog.action.confirm.description}</p> : null}
          <Suspense fallback={<Skeleton active />}>
            <FocusFirstField>
              <SchemaForm
                formRef={formRef}
                schema={dialog.schema}
                uiSchema={dialog.action.form?.uiSchema}
                formData={dialog.formData}
                onChange={onFormChange}
                onSubmit={onSubmit}
                extraErrors={dialog.extraErrors}
                formError={dialog.formError}
                submitting={busy}
                hideSubmit
              />
            </FocusFirstField>
          </Suspense>
        </Modal>
      ) : null}
      {/* A result shown once closes only by the viewer's choice, so a secret is not lost to a stray click. */}
      {shown && ResultView ? (
        <Modal
          open
          title={shown.spec.title ?? shown.label}
          closable={false}
          mask={{ closable: false }}
          keyboard={false}
          footer={
            <Button type="primary" onClick={onCloseShown}>
              {(shown.spec.widget ?? "secret-once") === "secret-once" ? "I have copied it" : "Close"}
            </Button>
          }
          destroyOnHidden
        >
          {shown.spec.description ? <p>{fillTemplate(shown.spec.description, shown.result)}</p> : null}
          <ResultView value={shown.value} options={shown.spec.options ?? {}} record={shown.result} copy />
        </Modal>
      ) : null}
    </>
  );
}
