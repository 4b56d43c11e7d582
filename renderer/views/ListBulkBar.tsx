// A list's bulk bar, shown while rows are selected: each bulk action runs once per selected row it is
// enabled for (after one confirmation), then the list refreshes and the selection clears.
import { Button, Space } from "antd";
import { actionState } from "../actions.tsx";
import { useData, useRefresh } from "../data.tsx";
import { useFeedback } from "../feedback.tsx";
import { icon } from "../icons.tsx";
import type { Scope } from "../resolve.ts";
import type { Action, ListView } from "../types.ts";
import { useOperationRun } from "../useOperationRun.ts";
import type { Row } from "./useListState.ts";

export function ListBulkBar({
  view,
  scope,
  selectedRows,
  clearSelection,
}: {
  view: ListView;
  scope: Scope;
  selectedRows: Row[];
  clearSelection: () => void;
}) {
  const { viewer } = useData();
  const { message, modal } = useFeedback();
  const refresh = useRefresh();
  const { run } = useOperationRun();
  if (!selectedRows.length) return null;

  async function runBulk(action: Action) {
    const targets = selectedRows.filter((row) => actionState(action, viewer.userRole, row, { ...scope, row }).enabled);
    const go = async () => {
      let failed = 0;
      let lastError = "";
      for (const row of targets) {
        const outcome = await run({
          operation: action.mutation as string,
          variables: action.variables,
          scope: { ...scope, row },
        });
        if (!outcome.ok) {
          failed += 1;
          lastError = outcome.errors.formError ?? "";
        }
      }
      await refresh(action.refresh?.length ? action.refresh : [view.query]);
      clearSelection();
      if (failed) message.error(`${action.label}: ${failed} of ${targets.length} failed. ${lastError}`);
      else message.success(`${action.label}: ${targets.length} done`);
    };
    if (action.confirm)
      modal.confirm({
        title: action.confirm.title,
        content: action.confirm.description ?? `This applies to ${targets.length} selected row(s).`,
        okText: action.confirm.okText ?? action.label,
        okButtonProps: { danger: action.confirm.danger },
        onOk: go,
      });
    else await go();
  }

  return (
    <section className="np-bulk-bar" aria-label="Bulk actions">
      <strong>{selectedRows.length} selected</strong>
      <Space size={8}>
        {(view.bulkActions ?? []).map((action) => {
          const enabled = selectedRows.some(
            (row) => actionState(action, viewer.userRole, row, { ...scope, row }).enabled,
          );
          return (
            <Button
              key={action.id ?? action.label}
              size="small"
              icon={icon(action.icon)}
              danger={action.danger || action.confirm?.danger}
              disabled={!enabled}
              onClick={() => void runBulk(action)}
            >
              {action.label}
            </Button>
          );
        })}
        <Button size="small" type="link" onClick={clearSelection}>
          Clear selection
        </Button>
      </Space>
    </section>
  );
}
