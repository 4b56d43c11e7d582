// Long pages (hundreds of rows) render only the rows in view, with @tanstack/react-virtual over the
// same TanStack Table model the antd Table uses for short pages. Styled with antd's table tokens.
import { flexRender, type RowData, type Table, type TableFeatures } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { theme } from "antd";
import { useRef } from "react";
import { Actions } from "../actions.tsx";
import type { Scope } from "../resolve.ts";
import type { Action, ListView } from "../types.ts";

const ROW_HEIGHT = 48;

export function VirtualRows<F extends TableFeatures, T extends RowData>({
  table,
  view,
  onRowOpen,
  actions,
  scope,
}: {
  table: Table<F, T>;
  view: ListView;
  onRowOpen?: (row: Record<string, unknown>) => void;
  actions: Action[];
  scope: Scope;
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
  const template = `${view.columns.map((column) => (column.width ? `${column.width}px` : "minmax(120px, 1fr)")).join(" ")}${actions.length ? " auto" : ""}`;
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
            {table.getAllLeafColumns().map((column) => (
              <th key={column.id} style={{ ...cellStyle, textAlign: "start", fontWeight: 600 }}>
                {String(column.columnDef.header ?? "")}
              </th>
            ))}
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
