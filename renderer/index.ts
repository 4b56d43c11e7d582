// The renderer's public surface for the app shell.
import "./widgets/builtins.tsx";
import { lazyWidget, registerWidget } from "./widgets/registry.ts";

// Edit controls load with the first form that shows them.
registerWidget("remote-options", {
  edit: lazyWidget(() => import("./form/RemoteOptions.tsx").then((module) => module.RemoteOptionsWidget)),
});
registerWidget("text-suggestions", {
  edit: lazyWidget(() => import("./form/TextSuggestions.tsx").then((module) => module.TextSuggestionsWidget)),
});
registerWidget("tags-input", {
  edit: lazyWidget(() => import("./form/TagsInput.tsx").then((module) => module.TagsInputWidget)),
});
// A read view with tabs, shown on few screens: it loads with the first field that uses it.
registerWidget("curl", { read: lazyWidget(() => import("./widgets/curl.tsx").then((module) => module.Curl)) });
registerWidget("countdown", {
  read: lazyWidget(() => import("./widgets/countdown.tsx").then((module) => module.Countdown)),
});
// The QR encoder is shown on one page (a crypto checkout): it loads with the first field that uses it.
registerWidget("qr-code", {
  read: lazyWidget(() => import("./widgets/qrCode.tsx").then((module) => module.QrCode)),
});
// The runner carries a form, so it loads with the form library only on screens that use it.
registerWidget("runner", { view: lazyWidget(() => import("./views/RunnerView.tsx").then((module) => module.default)) });

export { Actions, actionState } from "./actions.tsx";
export { DataProvider, useData, useRecordFormat, useRegistryQuery } from "./data.tsx";
export { FeedbackProvider, useFeedback } from "./feedback.tsx";
export { icon, registerIcons, registerLaterIcons } from "./icons.tsx";
export { useLeaveGuard } from "./leaveGuard.tsx";
export { useReducedMotion } from "./motion.ts";
export { can, requiredRole } from "./permissions.ts";
export { getPointer } from "./resolve.ts";
export { enumLabel, humanize } from "./schema.ts";
export { buildNavigation, menuEntryFor, type NavSection, RegistryRoutes, ScreenPage, SlotViews } from "./screens.tsx";
export { createHttpTransport, GqlError, type Transport } from "./transport.ts";
export type { Manifest, Registry, Role, Viewer } from "./types.ts";
export { errorMessage } from "./useOperationRun.ts";
export { type LogLine, LogLines } from "./widgets/logLines.tsx";
export { type CustomViewProps, lazyWidget, type ReadWidgetProps, registerWidget } from "./widgets/registry.ts";
