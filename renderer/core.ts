// The renderer's light surface: the GraphQL transport, its errors, the registry's early start and the
// motion preference. The app
// shell uses it before anyone is signed in, without loading the engine of screens, views and widgets
// (index.ts, which also registers the built-in widgets).
export { preloadRegistry, speculateRegistry } from "./data.tsx";
export { useReducedMotion } from "./motion.ts";
export { createHttpTransport, GqlError, type Transport } from "./transport.ts";
export type { Viewer } from "./types.ts";
export { errorMessage } from "./useOperationRun.ts";
