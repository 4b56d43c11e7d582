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
  return (
    <div
      role="table"
      aria-rowcount={rows.length}
      style={{ border: `1px solid ${token.colorBorderSecondary}`, borderRadius: token.borderRadiusLG }}
    >
      <div
        role="row"
        style={{
          display: "grid",
          gridTemplateColumns: template,
          background: token.colorFillAlter,
          fontWeight: 600,
          height: ROW_HEIGHT,
          alignItems: "center",
          borderBottom: `1px solid ${token.colorBorderSecondary}`,
        }}
      >
        {table.getAllLeafColumns().map((column) => (
          <div role="columnheader" key={column.id} style={cellStyle}>
            {String(column.columnDef.header ?? "")}
          </div>
        ))}
        {actions.length ? <div role="columnheader" style={cellStyle} /> : null}
      </div>
      <div ref={parent} style={{ height: Math.min(rows.length * ROW_HEIGHT, 640), overflow: "auto" }}>
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index];
            const original = row.original as Record<string, unknown>;
            return (
              <div
                role="row"
                key={row.id}
                onClick={onRowOpen ? () => onRowOpen(original) : undefined}
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
                  <div role="cell" key={cell.id} style={cellStyle}>
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </div>
                ))}
                {actions.length ? (
                  <div role="cell" style={cellStyle}>
                    <Actions
                      actions={actions}
                      subject={original}
                      scope={{ ...scope, row: original }}
                      mode="compact"
                      size="small"
                    />
                  </div>
                ) : null}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
