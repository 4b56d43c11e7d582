// The alert view: a banner that shows only while a named query answers rows (records in a state the
// user must act on), with a title that counts them and one line per row linking to it. Nothing shows while it
// loads or when there are no rows; a failed query shows as a warning, so a problem is never hidden.
import { Alert } from "antd";
import { useMemo } from "react";
import { Link } from "react-router";
import { useOperation } from "../data.tsx";
import { fillTemplate, getPath, resolveVariables, type Scope } from "../resolve.ts";
import type { AlertView as AlertViewSpec } from "../types.ts";
import { errorMessage } from "../useOperationRun.ts";

/** Rows named in the banner; the count in its title tells of the rest. */
const ROWS_SHOWN = 5;

export function AlertView({ view, scope }: { view: AlertViewSpec; scope: Scope }) {
  const variables = useMemo(() => resolveVariables(view.variables, scope), [view.variables, scope]);
  const result = useOperation(view.query, variables);
  if (result.error)
    return <Alert type="warning" showIcon title={view.errorTitle} description={errorMessage(result.error)} />;
  const found = result.data ? getPath(result.data, view.rows) : undefined;
  const rows = Array.isArray(found) ? found : [];
  if (rows.length === 0) return null;
  const count = { count: rows.length };
  const title = fillTemplate(rows.length === 1 ? (view.titleOne ?? view.title) : view.title, count, false, scope);
  return (
    <Alert
      data-view="alert"
      type={view.type ?? "error"}
      showIcon
      title={title}
      description={
        <>
          <ul style={{ margin: "4px 0 8px", paddingLeft: 20 }}>
            {rows.slice(0, ROWS_SHOWN).map((row, index) => {
              const text = fillTemplate(view.item.text, row, false, scope);
              const detail = view.item.detail ? fillTemplate(view.item.detail, row, false, scope) : "";
              return (
                // Rows without an id keep their order.
                <li key={String(getPath(row, "id") ?? index)}>
                  {view.item.link ? <Link to={fillTemplate(view.item.link, row, true, scope)}>{text}</Link> : text}
                  {/* Plain spans, not antd's Typography: it brings 12 kB gzip into every list that declares a banner. */}
                  {detail ? <span className="np-muted">{` — ${detail}`}</span> : null}
                </li>
              );
            })}
          </ul>
          {view.description ? <span>{view.description}</span> : null}
          {view.fix ? (
            <>
              {view.description ? " " : null}
              <Link to={view.fix.link}>{view.fix.label}</Link>
            </>
          ) : null}
        </>
      }
    />
  );
}
