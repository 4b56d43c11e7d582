// A list whose rows fall into groups (a list view's `group`): each group a collapsed section that
// names it and counts its rows, opened by a click or the keyboard (native <details>), with a search
// box over the rows shown that opens every group holding a match. For long lists of one page whose
// rows share a prefix, grouped by the part of a field its pattern captures.
import { type ColumnDef, useTable } from "@tanstack/react-table";
import { type ReactNode, useMemo, useState } from "react";
import { getPointer, type Scope } from "../resolve.ts";
import type { Action, ListView } from "../types.ts";
import { type ListSorting, ListTable } from "./ListTable.tsx";
import { type ListFeatures, listFeatures } from "./tableFeatures.ts";
import type { Row } from "./useListState.ts";

export type ListGroup = NonNullable<ListView["group"]>;

/** The group a row belongs to: the first match of the group's pattern in its field, else the field itself. */
export function groupOf(group: ListGroup, row: Row): string {
  const value = getPointer(row, group.field);
  const text = value === null || value === undefined ? "" : String(value);
  if (!group.pattern) return text;
  return new RegExp(group.pattern).exec(text)?.[0] ?? group.otherLabel ?? "Other";
}

/** Whether a row holds the searched text (case ignored) in any of the columns shown. */
export function rowMatches(view: ListView, row: Row, search: string): boolean {
  const wanted = search.trim().toLowerCase();
  if (!wanted) return true;
  return view.columns.some((column) => {
    const value = getPointer(row, column.field);
    return value !== null && value !== undefined && String(value).toLowerCase().includes(wanted);
  });
}

/** The rows by group, groups in the order their first row comes. */
export function groupRows(group: ListGroup, rows: Row[]): [string, Row[]][] {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const name = groupOf(group, row);
    groups.set(name, [...(groups.get(name) ?? []), row]);
  }
  return [...groups];
}

/** What a group's table is drawn from: the list's columns, one group's rows and the list's row parts. */
interface GroupTableProps {
  columns: ColumnDef<ListFeatures, Row>[];
  rows: Row[];
  rowKey: (row: Row, index: number) => string;
  view: ListView;
  actions: Action[];
  scope: Scope;
  sorting?: ListSorting;
  onRowOpen?: (row: Row) => void;
  refreshing: boolean;
}

function GroupTable(props: GroupTableProps) {
  const table = useTable({
    features: listFeatures,
    columns: props.columns,
    data: props.rows,
    getRowId: props.rowKey,
  });
  return (
    <ListTable
      table={table}
      view={props.view}
      actions={props.actions}
      scope={props.scope}
      sorting={props.sorting}
      onRowOpen={props.onRowOpen}
      refreshing={props.refreshing}
      empty={null}
    />
  );
}

export function ListGroups({
  group,
  rows,
  empty,
  ...table
}: GroupTableProps & {
  group: ListGroup;
  empty: ReactNode;
}) {
  const [search, setSearch] = useState("");
  const searching = search.trim() !== "";
  const groups = useMemo(
    () =>
      groupRows(
        group,
        rows.filter((row) => rowMatches(table.view, row, search)),
      ),
    [group, rows, table.view, search],
  );
  return (
    <div className="np-list-groups">
      <div className="np-search np-group-search">
        <input
          type="search"
          aria-label={group.search ?? "Search"}
          placeholder={group.search ?? "Search"}
          value={search}
          onChange={(event) => setSearch(event.target.value)}
        />
      </div>
      {rows.length === 0 ? (
        empty
      ) : groups.length === 0 ? (
        <p className="np-group-none">Nothing matches “{search.trim()}”.</p>
      ) : (
        groups.map(([name, members]) => (
          // Searching opens every group with a match; the key remounts each so that closing one
          // by hand after a search starts from the state the search left.
          <details key={`${name}:${searching}`} className="np-group" open={searching} data-group={name}>
            <summary>
              <span className="np-group-name">{name}</span>
              <span className="np-group-count">{members.length}</span>
            </summary>
            <GroupTable {...table} rows={members} />
          </details>
        ))
      )}
    </div>
  );
}
