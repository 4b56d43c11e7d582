// Icons by name. The app registers the icons its manifests name (keeping the bundle small); the names
// are declared in schemas/screen.schema.json (`icon`), so the registry refuses a manifest naming another.
import { type ComponentType, type LazyExoticComponent, lazy, type ReactElement, Suspense } from "react";

/** Each registered icon, drawn. */
const icons = new Map<string, () => ReactElement>();

export function registerIcons(entries: Record<string, ComponentType>): void {
  for (const [name, Component] of Object.entries(entries)) icons.set(name, () => <Component />);
}

/** What stands for a later icon while its code loads: an empty box of an icon's size, so nothing moves. */
function IconPlaceholder() {
  return <span className="anticon" aria-hidden="true" style={{ width: "1em", height: "1em" }} />;
}

function LaterIcon({ loaded: Loaded }: { loaded: LazyExoticComponent<ComponentType> }) {
  return (
    <Suspense fallback={<IconPlaceholder />}>
      <Loaded />
    </Suspense>
  );
}

/**
 * Icons whose code loads, all together, when the first of them is drawn: `load` resolves to each by its
 * name. An icon is decoration: one that could not load leaves its placeholder, not a failed page.
 */
export function registerLaterIcons<Name extends string>(
  names: readonly Name[],
  load: () => Promise<Record<Name, ComponentType>>,
): void {
  let loading: Promise<Record<Name, ComponentType>> | undefined;
  const group = () => {
    loading ??= load();
    return loading;
  };
  for (const name of names) {
    const loaded = lazy<ComponentType>(() =>
      group().then(
        (loadedIcons) => ({ default: loadedIcons[name] }),
        () => ({ default: IconPlaceholder }),
      ),
    );
    icons.set(name, () => <LaterIcon loaded={loaded} />);
  }
}

export function iconNames(): string[] {
  return [...icons.keys()];
}

export function icon(name: string | undefined) {
  const draw = name ? icons.get(name) : undefined;
  return draw?.();
}
