// The manifest format's types are generated from schemas/screen.schema.json (npm run generate); this
// module re-exports them with the few types that are the renderer's own.
import type { Manifest, Role } from "../schemas/generated/screen.ts";

export type {
  Action,
  ActionForm,
  AlertView,
  ChartSeries,
  ChartView,
  Confirm,
  CursorPaging,
  CustomView,
  DetailSection,
  DetailView,
  Field,
  Filter,
  FormView,
  ListView,
  Manifest,
  Nav,
  OptionsSource,
  Paging,
  Predicate,
  Requires,
  Role,
  RunnerOptions,
  RunnerOutput,
  ShowResult,
  StaticOption,
  SuggestionsSource,
  TimeRange,
  TokenPaging,
  Value,
  Variables,
  View,
} from "../schemas/generated/screen.ts";

/** A screen the viewer's role does not open: its address says which role it needs. */
export interface LockedScreen {
  id: string;
  route: string;
  title: string;
  requires: { role?: Role };
}

/** What `Query.registry` returns. */
export interface Registry {
  version: number;
  screens: Manifest[];
  schemas: Record<string, JsonSchema>;
  operations: Record<string, string>;
  /** Absent from registries recorded before it existed. */
  locked?: LockedScreen[];
  /** Names of catalogue values by kind (`network`, `chain`); absent in registries recorded before it. */
  catalogue?: Record<string, Record<string, string>>;
}

/** A JSON Schema (2020-12) object; only the keys the renderer reads are named. */
export interface JsonSchema {
  $id?: string;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  title?: string;
  description?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  required?: string[];
  [key: string]: unknown;
}

/** The signed-in viewer as the renderer needs it; other fields are readable through `$viewer.x`. */
export interface Viewer {
  email: string;
  userRole: Role | string;
  [key: string]: unknown;
}
