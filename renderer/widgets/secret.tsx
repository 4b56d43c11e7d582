// The `secret-once` read view: a value the service returns only once (a token, a key), shown in full
// with a copy button and a warning that it will not be shown again. Actions show it through
// `showResult`; after the dialog closes the value is gone from the page.
import { Alert } from "antd";
import type { ReadWidgetProps } from "./registry.ts";
import { CopyButton } from "./text.tsx";

export function SecretOnce({ value, options }: ReadWidgetProps) {
  const text = value === null || value === undefined ? "" : String(value);
  const warning =
    typeof options.warning === "string"
      ? options.warning
      : "Copy it now and keep it somewhere safe: it will not be shown again.";
  return (
    <div data-widget="secret-once">
      <Alert type="warning" showIcon title={warning} style={{ marginBottom: 12 }} />
      {text ? (
        <div className="np-secret">
          <span className="np-text" style={{ wordBreak: "break-all" }}>
            <code>{text}</code>
            <CopyButton text={text} />
          </span>
        </div>
      ) : (
        <span className="np-danger">The service returned no value to show.</span>
      )}
    </div>
  );
}
