// `$ref`s between entity schemas (`endpoint#/$defs/createInput`), followed the way the renderer follows
// them, for the registry's checks of forms and of the pointers a manifest reads in an entity schema.
import type { EntitySchemas } from "../platform/validation.ts";

/** Resolves local and cross-entity `$ref`s of an entity schema fragment. */
export function resolveRef(
  schemas: EntitySchemas,
  base: string,
  node: Record<string, unknown>,
): { entity: string; node: Record<string, unknown> } | null {
  let current = { entity: base, node };
  for (let depth = 0; depth < 10 && typeof current.node.$ref === "string"; depth++) {
    const found = lookupSchemaRef(schemas, current.node.$ref as string, current.entity);
    if (!found) return null;
    current = found;
  }
  return current;
}

export function lookupSchemaRef(
  schemas: EntitySchemas,
  ref: string,
  base: string,
): { entity: string; node: Record<string, unknown> } | null {
  const [entityPart, pointer = ""] = ref.split("#");
  const entity = entityPart || base;
  let node: unknown = schemas[entity];
  for (const segment of pointer.split("/").filter(Boolean)) {
    node = (node as Record<string, unknown> | undefined)?.[segment.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return node && typeof node === "object" ? { entity, node: node as Record<string, unknown> } : null;
}

/** The entity schema fragment a JSON pointer into an entity's values describes, or null. */
export function entitySchemaAt(
  schemas: EntitySchemas,
  entity: string,
  pointer: string,
): Record<string, unknown> | null {
  const root = schemas[entity];
  if (!root) return null;
  let current = resolveRef(schemas, entity, root);
  for (const raw of pointer ? pointer.slice(1).split("/") : []) {
    if (!current) return null;
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const { node } = current;
    const next =
      /^\d+$/.test(key) && node.items ? node.items : (node.properties as Record<string, unknown> | undefined)?.[key];
    if (!next || typeof next !== "object") return null;
    current = resolveRef(schemas, current.entity, next as Record<string, unknown>);
  }
  return current?.node ?? null;
}
