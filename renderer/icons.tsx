// Icons by name. The app registers the icons its manifests name (keeping the bundle small); an
// unknown name renders nothing rather than failing.
import type { ComponentType } from "react";

const icons = new Map<string, ComponentType>();

export function registerIcons(entries: Record<string, ComponentType>): void {
  for (const [name, component] of Object.entries(entries)) icons.set(name, component);
}

export function icon(name: string | undefined) {
  const Component = name ? icons.get(name) : undefined;
  return Component ? <Component /> : undefined;
}
