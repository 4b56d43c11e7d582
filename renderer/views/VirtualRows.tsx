// Long pages (hundreds of rows) render only the rows in view, with @tanstack/react-virtual over the
// same TanStack Table model ListTable draws short pages from, and offer what it offers: sortable
// column headers and row selection (by the list's state, so both survive moving between the two).
// Styled with antd's table tokens.
import { CaretDownOutlined, CaretUpOutlined } from "@ant-design/icons";
import { flexRender, type RowData, type Table, type TableFeatures } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { Checkbox, theme } from "antd";
import { useRef } from "react";
import { Actions } from "../actions.tsx";
import type { Scope } from "../resolve.ts";
import type { Action, Field, ListView } from "../types.ts";
import { nextSortOrder } from "./ListTable.tsx";
import type { RowSelection, SortOrder } from "./useListState.ts";

const ROW_HEIGHT = 48;
const SELECT_WIDTH = 48;

const ARIA_SORT = { ascend: "ascending", descend: "descending" } as const;

export function VirtualRows<F extends TableFeatures, T extends RowData>({
  table,
  view,
  onRowOpen,
  actions,
  scope,
  selection,
  sorting,
}: {
  table: Table<F, T>;
  view: ListView;
  onRowOpen?: (row: Record<string, unknown>) => void;
  actions: Action[];
  scope: Scope;
  /** The selected rows by id, when the viewer may select. */
  selection?: { selected: RowSelection; onChange: (rows: RowSelection) => void };
  /** The list's sort, when it has one. */
  sorting?: {
    orderOf: (field: Field) => SortOrder | undefined;
    sortBy: (field: Field, order: SortOrder | undefined) => void;
  };
}) {
  const { token } = theme.useToken();
  const parent = useRef<HTMLDivElement>(null);
  const rows = table.getRowModel().rows;
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const selectedCount = selection ? rows.filter((row) => selection.selected[row.id]).length : 0;
  const toggleRow = (id: string, on: boolean) => {
    if (!selection) return;
    const next: RowSelection = { ...selection.selected };
    if (on) next[id] = true;
    else delete next[id];
    selection.onChange(next);
  };
  const template = `${selection ? `${SELECT_WIDTH}px ` : ""}${view.columns.map((column) => (column.width ? `${column.width}px` : "minmax(120px, 1fr)")).join(" ")}${actions.length ? " auto" : ""}`;
  const cellStyle = { padding: "0 12px", overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" as const };
  const open = (original: Record<string, unknown>) => onRowOpen?.(original);
  // Real table elements laid out as grids: absolutely placed rows need display:grid on every level.
  return (
    <div
      ref={parent}
      style={{
        maxHeight: 640,
        overflow: "auto",
        border: `1px solid ${token.colorBorderSecondary}`,
        borderRadius: token.borderRadiusLG,
      }}
    >
      <table style={{ display: "grid", width: "100%", borderCollapse: "collapse" }} aria-rowcount={rows.length + 1}>
        <thead style={{ display: "grid", position: "sticky", top: 0, zIndex: 1 }}>
          <tr
            style={{
              display: "grid",
              gridTemplateColumns: template,
              background: token.colorFillAlter,
              height: ROW_HEIGHT,
              alignItems: "center",
              borderBottom: `1px solid ${token.colorBorderSecondary}`,
            }}
          >
            {selection ? (
              <th style={cellStyle}>
                <Checkbox
                  aria-label="Select all"
                  checked={rows.length > 0 && selectedCount === rows.length}
                  indeterminate={selectedCount > 0 && selectedCount < rows.length}
                  onChange={(event) =>
                    selection.onChange(
                      event.target.checked ? Object.fromEntries(rows.map((row) => [row.id, true as const])) : {},
                    )
                  }
                />
              </th>
            ) : null}
            {table.getAllLeafColumns().map((column, index) => {
              const field = view.columns[index];
              const header = String(column.columnDef.header ?? "");
              const order = sorting?.orderOf(field);
              return (
                <th
                  key={column.id}
                  style={{ ...cellStyle, textAlign: "start", fontWeight: 600 }}
                  aria-sort={order === undefined ? undefined : order ? ARIA_SORT[order] : "none"}
                >
                  {sorting && order !== undefined ? (
                    <button
                      type="button"
                      className="np-sort-header"
                      onClick={() => sorting.sortBy(field, nextSortOrder(order ?? undefined))}
                      style={{ all: "unset", cursor: "pointer", display: "inline-flex", gap: 4, alignItems: "center" }}
                    >
                      {header}
                      {order === "ascend" ? <CaretUpOutlined /> : order === "descend" ? <CaretDownOutlined /> : null}
                    </button>
                  ) : (
                    header
                  )}
                </th>
              );
            })}
            {actions.length ? (
              <th style={cellStyle}>
                <span className="np-sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody style={{ display: "grid", height: virtualizer.getTotalSize(), position: "relative" }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index];
            const original = row.original as Record<string, unknown>;
            return (
              <tr
                key={row.id}
                aria-rowindex={item.index + 2}
                tabIndex={onRowOpen ? 0 : undefined}
                onClick={onRowOpen ? () => open(original) : undefined}
                onKeyDown={
                  onRowOpen
                    ? (event) => {
                        if (event.key === "Enter" && event.target === event.currentTarget) open(original);
                      }
                    : undefined
                }
                style={{
                  position: "absolute",
                  top: 0,
                  left: 0,
                  right: 0,
                  height: ROW_HEIGHT,
                  transform: `translateY(${item.start}px)`,
                  display: "grid",
                  gridTemplateColumns: template,
                  alignItems: "center",
                  borderBottom: `1px solid ${token.colorBorderSecondary}`,
                  cursor: onRowOpen ? "pointer" : undefined,
                }}
              >
                {selection ? (
                  <td
                    style={cellStyle}
                    onClick={(event) => event.stopPropagation()}
                    onKeyDown={(event) => event.stopPropagation()}
                  >
                    <Checkbox
                      aria-label="Select row"
                      checked={Boolean(selection.selected[row.id])}
                      onChange={(event) => toggleRow(row.id, event.target.checked)}
                    />
                  </td>
                ) : null}
                {row.getAllCells().map((cell) => (
                  <td key={cell.id} style={cellStyle}>
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
                {actions.length ? (
                  <td style={cellStyle}>
                    <Actions
                      actions={actions}
                      subject={original}
                      scope={{ ...scope, row: original }}
                      mode="compact"
                      size="small"
                    />
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
