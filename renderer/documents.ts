// The renderer's own operation: the registry of screens, schemas and operations. A module without
// imports, so the console's boot script (src/boot.ts) can send it before the renderer has loaded.
export const REGISTRY_DOCUMENT = "query Registry { registry { version screens schemas operations locked catalogue } }";
