// Icons by name. The app registers the icons its manifests name (keeping the bundle small); the names
// are declared in schemas/screen.schema.json (`icon`), so the registry refuses a manifest naming another.
import type { ComponentType } from "react";

const icons = new Map<string, ComponentType>();

export function registerIcons(entries: Record<string, ComponentType>): void {
  for (const [name, component] of Object.entries(entries)) icons.set(name, component);
}

export function iconNames(): string[] {
  return [...icons.keys()];
}

export function icon(name: string | undefined) {
  const Component = name ? icons.get(name) : undefined;
  return Component ? <Component /> : undefined;
}
