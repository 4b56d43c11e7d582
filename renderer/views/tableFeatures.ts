import { tableFeatures } from "@tanstack/react-table";

/**
 * The TanStack Table features a list's model has: its core only (columns, rows, cells). The selection
 * of rows for bulk actions is the list's own state (useListState), drawn by ListTable and VirtualRows;
 * TanStack's row-selection feature (~4 kB gzip) only mirrored it.
 */
export const listFeatures = tableFeatures({});
export type ListFeatures = typeof listFeatures;
