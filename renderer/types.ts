// Types of the manifest format (schemas/screen.schema.json, version 1). Kept beside the renderer so
// every key the views read is typed; tests/unit/renderer checks each manifest against the meta-schema.

export type Role = "VIEWER" | "ADMIN" | "OWNER";

/** A literal, or a reference such as `$route.id`, `$row.id`, `$form.label` (see resolve.ts). */
export type Value = string | number | boolean | null | Value[] | { [key: string]: Value };
export type Variables = Record<string, Value>;

export type Predicate =
  | { field: string; eq?: Value; neq?: Value; in?: Value[]; truthy?: boolean }
  | { not: Predicate }
  | { all: Predicate[] }
  | { any: Predicate[] };

export interface Requires {
  role?: Role;
  flag?: string | null;
}

export type Nav =
  | { section: string; label: string; icon?: string; order?: number; tab?: string }
  | { parent: string; tab: string; order?: number }
  | { hidden: true; parent?: string };

export interface Confirm {
  title: string;
  description?: string;
  danger?: boolean;
  okText?: string;
}

export interface ActionForm {
  title?: string;
  schema: string;
  uiSchema?: Record<string, unknown>;
  initial?: Variables;
}

export interface Action {
  id?: string;
  label: string;
  icon?: string;
  to?: string;
  mutation?: string;
  variables?: Variables;
  role?: Role;
  danger?: boolean;
  primary?: boolean;
  confirm?: Confirm;
  form?: ActionForm;
  refresh?: string[];
  successMessage?: string;
  redirect?: string;
  visibleWhen?: Predicate;
  disabledWhen?: Predicate;
  showResult?: ShowResult;
}

/** After a mutation succeeds, show a field of its result in a dialog (e.g. a secret shown once). */
export interface ShowResult {
  field: string;
  widget?: string;
  title?: string;
  description?: string;
  options?: Record<string, unknown>;
}

export interface Field {
  field: string;
  label?: string;
  widget?: string;
  options?: Record<string, unknown>;
  link?: string;
  copy?: boolean;
  sortable?: string;
  width?: number;
  description?: string;
  actions?: Action[];
  itemActions?: Action[];
  visibleWhen?: Predicate;
}

export interface OptionsSource {
  query: string;
  variables?: Variables;
  rows: string;
  value: string;
  label: string;
  where?: Predicate;
  disabledWhen?: Predicate;
  badges?: { when: Predicate; label: string; color?: string }[];
}

export interface StaticOption {
  value: Value;
  label: string;
}

export interface Filter {
  variable: string;
  label: string;
  multiple?: boolean;
  field?: string;
  options?: OptionsSource | StaticOption[];
  default?: string | number | boolean;
  requires?: Requires;
}

/** Relay-style paging: `first`/`after` variables, the end cursor and hasNextPage in the result. */
export interface CursorPaging {
  mode?: "cursor";
  first: string;
  after: string;
  endCursor: string;
  hasNextPage: string;
  total?: string;
  pageSize?: number;
}

/** Token paging: a size variable and a token variable; the result names the next token (null at the end). */
export interface TokenPaging {
  mode: "token";
  size: string;
  token: string;
  next: string;
  total?: string;
  pageSize?: number;
}

export type Paging = CursorPaging | TokenPaging;

/** A time-range filter: presets like `15m`, `1h`, `24h`, `7d` and a custom range, kept in the URL. */
export interface TimeRange {
  from: string;
  to: string;
  presets?: string[];
  default?: string;
  custom?: boolean;
}

export interface ListView {
  kind: "list";
  id?: string;
  title?: string;
  query: string;
  variables?: Variables;
  entity?: string;
  rows: string;
  rowKey?: string;
  paging?: Paging;
  search?: { variable: string; placeholder?: string };
  sort?: { variable: string; default?: string };
  filters?: Filter[];
  timeRange?: TimeRange;
  columns: Field[];
  rowLink?: string;
  rowActions?: Action[];
  bulkActions?: Action[];
  toolbar?: Action[];
  empty?: { title?: string; description?: string };
}

export interface DetailSection {
  title?: string;
  fields: Field[];
}

export interface DetailView {
  kind: "detail";
  id?: string;
  title?: string;
  query: string;
  variables?: Variables;
  entity?: string;
  record: string;
  sections: DetailSection[];
  actions?: Action[];
}

export interface FormView {
  kind: "form";
  id?: string;
  title?: string;
  description?: string;
  mutation: string;
  schema: string;
  uiSchema?: Record<string, unknown>;
  variables?: Variables;
  initial?: { query: string; variables?: Variables; record: string };
  role?: Role;
  submit?: { label?: string; refresh?: string[]; redirect?: string; successMessage?: string; reset?: boolean };
}

export interface ChartSeries {
  name?: string;
  rows: string;
  encode: { x: string; y: string; series?: string };
}

export interface ChartView {
  kind: "chart";
  id?: string;
  title?: string;
  query: string;
  variables?: Variables;
  chartType: "line" | "bar" | "area" | "pie";
  series: ChartSeries[];
  xType?: "time" | "category" | "value";
  yFormat?: string;
}

export interface CustomView {
  kind: "custom";
  id?: string;
  title?: string;
  widget: string;
  query?: string;
  variables?: Variables;
  record?: string;
  options?: Record<string, unknown>;
}

/** One result path of a `runner` custom view and how to show it. */
export interface RunnerOutput {
  path: string;
  label?: string;
  widget?: string;
  options?: Record<string, unknown>;
}

/** Options of the `runner` custom view: run a named operation with a small form, show the result. */
export interface RunnerOptions {
  /** Exactly one of query and mutation. */
  query?: string;
  mutation?: string;
  schema: string;
  uiSchema?: Record<string, unknown>;
  variables?: Variables;
  initial?: Variables;
  submitLabel?: string;
  role?: Role;
  outputs?: RunnerOutput[];
  /** Queries (by operation name) to refetch after a successful run, e.g. a history the run adds to. */
  refresh?: string[];
}

export type View = ListView | DetailView | FormView | ChartView | CustomView;

export interface Manifest {
  $schema?: string;
  version: 1;
  id: string;
  route: string;
  title: string;
  description?: string;
  nav?: Nav;
  requires?: Requires;
  views: View[];
}

/** What `Query.registry` returns. */
export interface Registry {
  version: number;
  screens: Manifest[];
  schemas: Record<string, JsonSchema>;
  operations: Record<string, string>;
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
