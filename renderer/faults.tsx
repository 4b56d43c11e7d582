// A mistake in a manifest met while rendering (a widget the renderer does not know, a pointer to a key
// the answer does not have): `npm run validate` and the service's registry check catch these before a
// screen is served, so one reaching the renderer is a bug. In development and tests (Vite's and
// Vitest's DEV) it throws with the name, so the screen's error boundary, the error overlay or the
// failing test says what is wrong; in production the screen keeps working, with a visible placeholder
// where the value would be and the mistake in the console.
import { Alert } from "antd";
import { Component, createContext, type ReactNode, useContext, useMemo, useSyncExternalStore } from "react";
import { useData } from "./data.tsx";
import { getPath, pathSegments, pointerSegments } from "./resolve.ts";
import type { ChartView } from "./types.ts";

/** Whether a manifest mistake throws: read at each call, so a test can stub the mode. */
export function failsLoudly(): boolean {
  return import.meta.env?.DEV === true;
}

export class ManifestFault extends Error {
  override name = "ManifestFault";
}

function placeholder(message: string) {
  return (
    <span className="np-manifest-fault" data-manifest-fault="">
      {message}
    </span>
  );
}

/** Throws in development and tests; in production logs and returns the placeholder to show. */
export function manifestFault(message: string) {
  if (failsLoudly()) throw new ManifestFault(message);
  console.error(`Nodeplane screen: ${message}`);
  return placeholder(message);
}

/** The screen being rendered, so a fault names it. */
const ScreenId = createContext<string | undefined>(undefined);

/** Where the values a view shows come from: its operation's document and the result path of one row or record. */
interface AnswerSource {
  operation: string;
  document: string | undefined;
  path: string;
  reader: SelectionReader | undefined;
}
const RecordSource = createContext<AnswerSource | undefined>(undefined);

/**
 * The selection reader (selection.ts) is only needed once an answer lacks a key a pointer reads: rare
 * (a fault, a conditionally selected key, a key inside a JSON value), so it loads then, in a chunk of its
 * own, and is not part of the console's first download (docs/decisions/1400-initial-js-budget.md). Until
 * it has loaded, the check passes; when it has, the views that asked render again and check.
 */
type SelectionReader = typeof import("./selection.ts");
let loadedReader: SelectionReader | undefined;
let readerRequested = false;
const readerWaiters = new Set<() => void>();

function loadReader() {
  if (readerRequested) return;
  readerRequested = true;
  void import("./selection.ts").then((reader) => {
    loadedReader = reader;
    for (const notify of readerWaiters) notify();
  });
}

function waitForReader(notify: () => void) {
  readerWaiters.add(notify);
  return () => {
    readerWaiters.delete(notify);
  };
}

/** The selection reader once loaded (the component renders again then), else undefined. */
function useReader(): SelectionReader | undefined {
  return useSyncExternalStore(waitForReader, () => loadedReader);
}

/** Whether every key `keys` names is in `value`, as far as a null, a leaf or a list index stops the walk. */
function answerHasKeys(value: unknown, keys: string[]): boolean {
  let current = value;
  for (const key of keys) {
    if (current === null || typeof current !== "object") return true;
    if (!Array.isArray(current) && !(key in current)) return false;
    current = (current as Record<string, unknown>)[key];
  }
  return true;
}

/**
 * The keys up to the first one `keys` names that the answer of `operation` lacks and its selection does
 * not make optional (selection.ts unansweredKey), read from `path` (a row's or record's result path).
 */
function unanswered(
  reader: SelectionReader | undefined,
  operation: string,
  document: string | undefined,
  path: string,
  value: unknown,
  keys: string[],
): string[] | undefined {
  if (!document || answerHasKeys(value, keys)) return undefined;
  if (!reader) {
    loadReader();
    return undefined;
  }
  const selection = reader.selectionAtPath(reader.selectionOf(document, operation), path);
  return reader.unansweredKey(selection, value, keys);
}

/** The (screen, pointer) pairs already logged in production: one console error each, not one per cell. */
const logged = new Set<string>();

/**
 * The fault of a pointer that names a key the answer lacks. GraphQL answers every selected field with
 * its key (null when it has no value), so a missing key means the pointer reads something the
 * operation does not select; null, a null parent, an index past a list's end, a conditionally selected
 * key and anything inside a leaf (`JSON`) are values, not faults (selection.ts).
 */
function pointerFault(screen: string | undefined, operation: string, pointer: string, where: string, missing: string) {
  const message = `${screen ? `Screen ${screen}: ` : ""}${where} ${pointer} reads '${missing}', which the answer of ${operation} does not have`;
  if (failsLoudly()) throw new ManifestFault(message);
  const once = `${screen} ${pointer}`;
  if (!logged.has(once)) {
    logged.add(once);
    console.error(`Nodeplane screen: ${message}`);
  }
  return placeholder(`Missing ${pointer}`);
}

/** The start of a dotted result path that reads its first `count` keys (pathSegments), in the path's own form. */
function pathUpTo(path: string, count: number): string {
  const parts: string[] = [];
  let read = 0;
  for (const raw of path.split(".").filter(Boolean)) {
    if (read >= count) break;
    const list = raw.endsWith("[]");
    read += list ? 2 : 1;
    parts.push(list && read > count ? raw.slice(0, -2) : raw);
  }
  return parts.join(".");
}

/** The document of `operation` in the registry. */
function useDocument(operation: string | undefined): string | undefined {
  const { registry } = useData();
  return operation ? registry.operations[operation] : undefined;
}

/**
 * Checks a result path (`rows`, `record`) against an answer: its fault (thrown in development, logged
 * once in production) or undefined. A list's first item stands for all, as one selection gives them.
 */
export function useResultPathCheck(operation: string | undefined, path: string | undefined, data: unknown) {
  const screen = useContext(ScreenId);
  const document = useDocument(operation);
  const reader = useReader();
  if (!operation || !path || data === undefined) return undefined;
  const missing = unanswered(reader, operation, document, "", data, pathSegments(path));
  return missing ? pointerFault(screen, operation, path, "The path", pathUpTo(path, missing.length)) : undefined;
}

/**
 * Checks a chart's series against its answer: each series' `rows` path, then its `encode` pointers
 * (x, y, series) against the first row, which stands for all. Its fault (thrown in development, logged
 * once in production) or undefined.
 */
export function useChartCheck(view: ChartView, data: unknown): ReactNode | undefined {
  const screen = useContext(ScreenId);
  const document = useDocument(view.query);
  const reader = useReader();
  if (data === undefined) return undefined;
  for (const spec of view.series) {
    const missingRows = unanswered(reader, view.query, document, "", data, pathSegments(spec.rows));
    if (missingRows)
      return pointerFault(screen, view.query, spec.rows, "The chart's rows", pathUpTo(spec.rows, missingRows.length));
    const rows = getPath(data, spec.rows);
    if (!Array.isArray(rows) || !rows.length) continue;
    for (const pointer of [spec.encode.x, spec.encode.y, spec.encode.series]) {
      const missing = pointer
        ? unanswered(reader, view.query, document, spec.rows, rows[0], pointerSegments(pointer))
        : undefined;
      if (pointer && missing)
        return pointerFault(screen, view.query, pointer, "The chart's encode", `/${missing.join("/")}`);
    }
  }
  return undefined;
}

/** Gives the views inside it the operation and result path of the row or record they show. */
export function RecordSourceProvider({
  operation,
  path,
  children,
}: {
  operation: string;
  path: string;
  children: ReactNode;
}) {
  const document = useDocument(operation);
  const reader = useReader();
  const source = useMemo(() => ({ operation, document, path, reader }), [operation, document, path, reader]);
  return <RecordSource.Provider value={source}>{children}</RecordSource.Provider>;
}

/** The fault of a field pointer into the current row or record, or undefined when the answer has the key. */
export function usePointerCheck(): (record: unknown, pointer: string, where: string) => ReactNode | undefined {
  const screen = useContext(ScreenId);
  const source = useContext(RecordSource);
  return (record, pointer, where) => {
    if (!source) return undefined;
    const { operation, document, path, reader } = source;
    const missing = unanswered(reader, operation, document, path, record, pointerSegments(pointer));
    return missing ? pointerFault(screen, operation, pointer, where, `/${missing.join("/")}`) : undefined;
  };
}

/**
 * A screen's error boundary: a manifest fault thrown inside it (development and tests) is shown in
 * place of the screen with its message; any other error goes on to the boundary above. Keyed by the
 * screen (screens.tsx), so a fault shown does not stay when the viewer moves to another screen.
 */
export class ScreenFaultBoundary extends Component<{ screen: string; children: ReactNode }, { error?: unknown }> {
  override state: { error?: unknown } = {};
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  override render() {
    const { error } = this.state;
    if (error instanceof ManifestFault)
      return <Alert type="error" showIcon title="This screen's manifest has a mistake" description={error.message} />;
    if (error) throw error;
    return <ScreenId.Provider value={this.props.screen}>{this.props.children}</ScreenId.Provider>;
  }
}
