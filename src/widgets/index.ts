// Every custom widget the manifests may name, registered by name; each loads when a screen first shows
// it, so no screen downloads another screen's widgets.
import { lazyWidget, registerWidget } from "../../renderer/index.ts";
import "./stream-icons.tsx";

registerWidget("code-sample", {
  view: lazyWidget(() => import("./code-sample.tsx").then((module) => module.CodeSample)),
});
registerWidget("stream-filter-tester", {
  view: lazyWidget(() => import("./stream-filter-tester.tsx").then((module) => module.FilterTester)),
});
registerWidget("stream-raw-payload", {
  view: lazyWidget(() => import("./stream-raw-payload.tsx").then((module) => module.RawPayload)),
});
registerWidget("stream-start-block", {
  edit: lazyWidget(() => import("./stream-start-block.tsx").then((module) => module.StartBlock)),
});
registerWidget("code-editor", {
  edit: lazyWidget(() => import("./code-editor.tsx").then((module) => module.CodeEditor)),
});
registerWidget("kv-upload", {
  view: lazyWidget(() => import("./kv-upload.tsx").then((module) => module.KvUpload)),
});
registerWidget("filter-editor", {
  edit: lazyWidget(() => import("./filter-editor.tsx").then((module) => module.FilterEditorWidget)),
});
registerWidget("rest-reference", {
  view: lazyWidget(() => import("./rest-reference.tsx").then((module) => module.RestReference)),
});
