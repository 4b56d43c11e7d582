import { rowSelectionFeature, tableFeatures } from "@tanstack/react-table";

/** The TanStack Table features a list's model has: its rows and their selection. */
export const listFeatures = tableFeatures({ rowSelectionFeature });
export type ListFeatures = typeof listFeatures;
