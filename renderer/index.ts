// The renderer's public surface for the app shell.
import "./widgets/builtins.tsx";
import { RemoteOptionsWidget } from "./form/RemoteOptions.tsx";
import { registerWidget } from "./widgets/registry.ts";

registerWidget("remote-options", { edit: RemoteOptionsWidget });

export { Actions, actionState, errorMessage } from "./actions.tsx";
export {
  createHttpTransport,
  DataProvider,
  GqlError,
  type Transport,
  useData,
  useRegistryQuery,
} from "./data.tsx";
export { SchemaForm } from "./form/SchemaForm.tsx";
export { icon, registerIcons } from "./icons.tsx";
export { can, requiredRole } from "./permissions.ts";
export { buildNavigation, menuEntryFor, type NavSection, RegistryRoutes, ScreenPage } from "./screens.tsx";
export type { Manifest, Registry, Role, Viewer } from "./types.ts";
export { type CustomViewProps, type ReadWidgetProps, registerWidget } from "./widgets/registry.ts";
