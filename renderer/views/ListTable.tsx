// A list page's rows as a semantic <table>, drawn with antd's design tokens: sortable column headers
// (a button in the header, its state in aria-sort), row selection, a row that opens its record on
// click, an actions column that stays in view while the table scrolls sideways, an empty state and a
// refresh overlay. antd's Table would bring its tree, pagination, filter dropdowns and virtual body
// (~65 kB gzip) to every first list screen for the part of it the list uses.
import { CaretDownOutlined, CaretUpOutlined } from "@ant-design/icons";
import { flexRender, type RowData, type Table, type TableFeatures } from "@tanstack/react-table";
import { Checkbox, ConfigProvider, Spin, theme } from "antd";
import { type CSSProperties, type ReactNode, useContext, useLayoutEffect, useRef, useState } from "react";
import { Actions } from "../actions.tsx";
import type { Scope } from "../resolve.ts";
import type { Action, Field, ListView } from "../types.ts";
import type { RowSelection, SortOrder } from "./useListState.ts";

/** The order a click on a sortable header moves to: ascending, descending, then none. */
export function nextSortOrder(current: SortOrder | undefined): SortOrder | undefined {
  if (current === "ascend") return "descend";
  if (current === "descend") return undefined;
  return "ascend";
}

const ARIA_SORT = { ascend: "ascending", descend: "descending" } as const;

export interface ListSorting {
  orderOf: (field: Field) => SortOrder | null | undefined;
  sortBy: (field: Field, order: SortOrder | undefined) => void;
}

export interface ListSelection {
  selected: RowSelection;
  onChange: (rows: RowSelection) => void;
}

/** A column header: a button that moves the sort when the column sorts, its order in aria-sort. */
export function SortableHeader({
  label,
  field,
  sorting,
  style,
  className,
}: {
  label: string;
  field: Field;
  sorting: ListSorting | undefined;
  style?: CSSProperties;
  className?: string;
}) {
  const order = sorting?.orderOf(field);
  const sortable = sorting !== undefined && order !== undefined;
  return (
    <th
      scope="col"
      className={className}
      style={style}
      aria-sort={sortable ? (order ? ARIA_SORT[order] : "none") : undefined}
    >
      {sortable ? (
        <button
          type="button"
          className="np-sort-header"
          onClick={() => sorting.sortBy(field, nextSortOrder(order ?? undefined))}
        >
          <span>{label}</span>
          <span className="np-sort-carets" aria-hidden="true">
            <CaretUpOutlined className={order === "ascend" ? "np-sort-on" : undefined} />
            <CaretDownOutlined className={order === "descend" ? "np-sort-on" : undefined} />
          </span>
        </button>
      ) : (
        label
      )}
    </th>
  );
}

/**
 * A column's declared width, for its cells' text to wrap within (src/styles.css): a table cell takes
 * no max-width, and the table is as wide as its content, so one long value would widen the column.
 */
function cellWidth(width: number | undefined): { "data-width"?: true; style?: CSSProperties } {
  return width ? { "data-width": true, style: { "--np-cell-width": `${width}px` } as CSSProperties } : {};
}

/** Whether the rows are selected: all, some (indeterminate) or none; and the toggle of all. */
function SelectAll({ ids, selection }: { ids: string[]; selection: ListSelection }) {
  const count = ids.filter((id) => selection.selected[id]).length;
  return (
    <Checkbox
      aria-label="Select all"
      checked={ids.length > 0 && count === ids.length}
      indeterminate={count > 0 && count < ids.length}
      onChange={(event) =>
        selection.onChange(event.target.checked ? Object.fromEntries(ids.map((id) => [id, true as const])) : {})
      }
    />
  );
}

export function ListTable<F extends TableFeatures, T extends RowData>({
  table,
  view,
  actions,
  scope,
  selection,
  sorting,
  onRowOpen,
  refreshing,
  empty,
}: {
  table: Table<F, T>;
  view: ListView;
  actions: Action[];
  scope: Scope;
  selection?: ListSelection;
  sorting?: ListSorting;
  onRowOpen?: (row: Record<string, unknown>) => void;
  /** A newer answer is on its way: the rows shown stay, dimmed, under a spinner. */
  refreshing: boolean;
  empty: ReactNode;
}) {
  const { token } = theme.useToken();
  // The console's own Table tokens (its header colour), as antd's Table would read them.
  const tableTheme = useContext(ConfigProvider.ConfigContext).theme?.components?.Table;
  const rows = table.getRowModel().rows;
  const columns = table.getAllLeafColumns();
  const ids = rows.map((row) => row.id);
  // The actions column casts a shadow over the cells that scroll under it, as antd's fixed columns do.
  const scroller = useRef<HTMLDivElement>(null);
  const [scrolledUnder, setScrolledUnder] = useState(false);
  const measure = () => {
    const element = scroller.current;
    if (element) setScrolledUnder(element.scrollLeft + element.clientWidth < element.scrollWidth - 1);
  };
  useLayoutEffect(() => {
    measure();
    window.addEventListener("resize", measure);
    return () => window.removeEventListener("resize", measure);
  });
  const tokens = {
    "--np-table-border": token.colorBorderSecondary,
    "--np-table-header-bg": tableTheme?.headerBg ?? token.colorFillAlter,
    "--np-table-header-color": token.colorTextHeading,
    "--np-table-row-hover": token.colorFillAlter,
    "--np-table-selected": token.controlItemBgActive,
    "--np-table-sort-on": token.colorPrimary,
    "--np-table-sort-off": token.colorTextQuaternary,
    "--np-table-sort-header": token.colorFillSecondary,
    "--np-table-sort-body": token.colorFillQuaternary,
    "--np-table-radius": `${token.borderRadiusLG}px`,
    "--np-table-bg": token.colorBgContainer,
  } as CSSProperties;

  return (
    <Spin spinning={refreshing}>
      <div className="np-table" style={tokens} data-scrolled-right={scrolledUnder || undefined}>
        {/* Focusable, so keyboard users can scroll a wide table sideways. */}
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (WCAG 2.1.1). */}
        <div className="np-table-scroll" ref={scroller} tabIndex={0} onScroll={measure}>
          <table>
            <thead>
              <tr>
                {selection ? (
                  <th scope="col" className="np-table-select">
                    <SelectAll ids={ids} selection={selection} />
                  </th>
                ) : null}
                {columns.map((column, index) => (
                  <SortableHeader
                    key={column.id}
                    label={String(column.columnDef.header ?? "")}
                    field={view.columns[index]}
                    sorting={sorting}
                    style={view.columns[index].width ? { width: view.columns[index].width } : undefined}
                  />
                ))}
                {actions.length ? (
                  <th scope="col" className="np-table-actions">
                    <span className="np-sr-only">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {rows.length
                ? rows.map((row) => {
                    const original = row.original as Record<string, unknown>;
                    const selected = Boolean(selection?.selected[row.id]);
                    return (
                      <tr
                        key={row.id}
                        className="np-table-row"
                        data-row-key={row.id}
                        data-selected={selected || undefined}
                        data-opens={onRowOpen ? true : undefined}
                        onClick={
                          onRowOpen
                            ? (event) => {
                                // A link, button or checkbox in the row does its own thing.
                                if ((event.target as HTMLElement).closest("a,button,input,label,.ant-dropdown")) return;
                                onRowOpen(original);
                              }
                            : undefined
                        }
                      >
                        {selection ? (
                          <td className="np-table-select">
                            <Checkbox
                              aria-label="Select row"
                              checked={selected}
                              onChange={(event) => {
                                const next: RowSelection = { ...selection.selected };
                                if (event.target.checked) next[row.id] = true;
                                else delete next[row.id];
                                selection.onChange(next);
                              }}
                            />
                          </td>
                        ) : null}
                        {row.getAllCells().map((cell, index) => (
                          <td
                            key={cell.id}
                            data-sorted={sorting?.orderOf(view.columns[index]) ? true : undefined}
                            data-label={String(cell.column.columnDef.header ?? "")}
                            data-nowrap={view.columns[index].nowrap ? true : undefined}
                            {...cellWidth(view.columns[index].width)}
                          >
                            {/* One box per value: on a phone the cell is a row of a card, its label beside it. */}
                            <div className="np-cell">{flexRender(cell.column.columnDef.cell, cell.getContext())}</div>
                          </td>
                        ))}
                        {actions.length ? (
                          <td className="np-table-actions">
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
                  })
                : null}
            </tbody>
          </table>
        </div>
        {/* Below the table rather than in a row of it: a wide table scrolls sideways, and its empty state
            must stay in view on a phone. */}
        {rows.length ? null : <div className="np-table-empty">{empty}</div>}
      </div>
    </Spin>
  );
}
