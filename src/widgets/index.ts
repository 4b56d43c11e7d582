// Every custom widget the manifests may name, registered by name; each loads when a screen first shows
// it, so no screen downloads another screen's widgets.
import { lazy } from "react";
import { registerWidget } from "../../renderer/index.ts";
import "./stream-icons.tsx";

registerWidget("code-sample", {
  view: lazy(() => import("./code-sample.tsx").then((module) => ({ default: module.CodeSample }))),
});
registerWidget("stream-filter-tester", {
  view: lazy(() => import("./stream-filter-tester.tsx").then((module) => ({ default: module.FilterTester }))),
});
registerWidget("stream-raw-payload", {
  view: lazy(() => import("./stream-raw-payload.tsx").then((module) => ({ default: module.RawPayload }))),
});
registerWidget("stream-start-block", {
  edit: lazy(() => import("./stream-start-block.tsx").then((module) => ({ default: module.StartBlock }))),
});
registerWidget("code-editor", {
  edit: lazy(() => import("./code-editor.tsx").then((module) => ({ default: module.CodeEditor }))),
});
