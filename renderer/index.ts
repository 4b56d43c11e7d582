// The renderer's public surface for the app shell.
import "./widgets/builtins.tsx";
import { lazy } from "react";
import { RemoteOptionsWidget } from "./form/RemoteOptions.tsx";
import { TagsInputWidget } from "./form/TagsInput.tsx";
import { registerWidget } from "./widgets/registry.ts";

registerWidget("remote-options", { edit: RemoteOptionsWidget });
registerWidget("tags-input", { edit: TagsInputWidget });
// The runner carries a form, so it loads with the form library only on screens that use it.
registerWidget("runner", { view: lazy(() => import("./views/RunnerView.tsx")) });

export { Actions, actionState } from "./actions.tsx";
export {
  createHttpTransport,
  DataProvider,
  GqlError,
  type Transport,
  useData,
  useRegistryQuery,
} from "./data.tsx";
export { icon, registerIcons } from "./icons.tsx";
export { useReducedMotion } from "./motion.ts";
export { can, requiredRole } from "./permissions.ts";
export { getPointer } from "./resolve.ts";
export { enumLabel, humanize } from "./schema.ts";
export { buildNavigation, menuEntryFor, type NavSection, RegistryRoutes, ScreenPage } from "./screens.tsx";
export type { Manifest, Registry, Role, Viewer } from "./types.ts";
export { errorMessage } from "./useOperationRun.ts";
export { type CustomViewProps, type ReadWidgetProps, registerWidget } from "./widgets/registry.ts";
