// The `curl` read view: ready-to-copy cURL commands that call the HTTP address in the value, one per
// sample body, each with a copy button. Options: { method?: string ("POST"), headers?: { [name]: value }
// (sent as written: a placeholder the caller replaces, such as a cookie), samples?: [{ label, body,
// description? }] (a JSON body each, in tabs when more than one), note?: string (what authenticates
// the call, shown above the commands), bodyField?: a JSON pointer into the row or record whose value is the
// body (JSON text or a value: one sample per row, e.g. a method's own call) }. A relative address is resolved against the browser's origin;
// an absolute one (the service's own address for the request) is kept as it is.
import { Alert, Tabs } from "antd";
import { getPointer } from "../resolve.ts";
import type { ReadWidgetProps } from "./registry.ts";
import { CopyButton, EMPTY, Muted } from "./text.tsx";

export interface CurlSample {
  label: string;
  body?: unknown;
  description?: string;
}

/** A word for a POSIX shell: single-quoted, each single quote inside closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The cURL command for one call: method, address, headers and a JSON body, one option a line. */
export function curlCommand(url: string, method: string, headers: Record<string, string>, body?: unknown): string {
  const parts = [`curl -X ${method} ${shellQuote(url)}`];
  if (body !== undefined) parts.push(`-H ${shellQuote("Content-Type: application/json")}`);
  for (const [name, value] of Object.entries(headers)) parts.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if (body !== undefined) parts.push(`-d ${shellQuote(JSON.stringify(body))}`);
  return parts.join(" \\\n  ");
}

/** The address a command calls: a path is taken from the page's own origin. */
export function callAddress(value: string, origin: string = window.location.origin): string {
  return new URL(value, origin).href;
}

function stringRecord(value: unknown): Record<string, string> {
  if (!value || typeof value !== "object" || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([name, text]) => [name, String(text)]));
}

function samplesOf(value: unknown): CurlSample[] {
  const samples = Array.isArray(value) ? (value as CurlSample[]).filter((sample) => sample?.label) : [];
  return samples.length ? samples : [{ label: "cURL" }];
}

function Command({ sample, command }: { sample: CurlSample; command: string }) {
  return (
    <div className="np-curl-sample">
      {sample.description ? <Muted>{sample.description}</Muted> : null}
      <div className="np-curl">
        <pre>{command}</pre>
        <CopyButton text={command} label={`Copy the cURL command (${sample.label})`} />
      </div>
    </div>
  );
}

/** The body the row or record holds at `pointer`: JSON text is parsed, anything else sent as it is. */
function rowBody(record: unknown, pointer: string): CurlSample[] {
  const body = getPointer(record, pointer);
  if (body === undefined || body === null) return [];
  if (typeof body !== "string") return [{ label: "cURL", body }];
  try {
    return [{ label: "cURL", body: JSON.parse(body) }];
  } catch {
    return [{ label: "cURL", body }];
  }
}

export function Curl({ value, options, record }: ReadWidgetProps) {
  if (typeof value !== "string" || value === "") return EMPTY;
  const url = callAddress(value);
  const method = typeof options.method === "string" ? options.method : "POST";
  const headers = stringRecord(options.headers);
  const fromRow = typeof options.bodyField === "string" ? rowBody(record, options.bodyField) : [];
  const samples = fromRow.length ? fromRow : samplesOf(options.samples);
  const commands = samples.map((sample) => curlCommand(url, method, headers, sample.body));
  return (
    <div data-widget="curl">
      {typeof options.note === "string" ? (
        <Alert type="info" showIcon title={options.note} style={{ marginBottom: 12 }} />
      ) : null}
      {samples.length === 1 ? (
        <Command sample={samples[0]} command={commands[0]} />
      ) : (
        <Tabs
          size="small"
          className="np-sample-tabs"
          items={samples.map((sample, index) => ({
            // antd builds the tab's element ids from its key: a label's spaces would make invalid ARIA references.
            key: String(index),
            label: sample.label,
            children: <Command sample={sample} command={commands[index]} />,
          }))}
        />
      )}
    </div>
  );
}
