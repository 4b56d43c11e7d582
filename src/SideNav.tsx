// The side navigation: the registry's menu sections as lists of links, the current page's link marked
// with aria-current. Narrowed (the collapsed sidebar), only the icons show; each link keeps its name.
// Tab moves through the links; the arrow keys, Home and End move between them too. Our own: antd's Menu
// (with its dropdown, overflow and motion code, ~14 kB gzip, and its styles made at the first render)
// is a menu widget for a list of page links.
import { type KeyboardEvent, useId } from "react";
import { Link } from "react-router";
import { icon, type NavSection } from "../renderer/index.ts";

const MOVES: Record<string, (index: number, count: number) => number> = {
  ArrowDown: (index, count) => (index + 1) % count,
  ArrowUp: (index, count) => (index - 1 + count) % count,
  Home: () => 0,
  End: (_, count) => count - 1,
};

function moveFocus(event: KeyboardEvent<HTMLElement>) {
  const move = MOVES[event.key];
  if (!move || event.altKey || event.ctrlKey || event.metaKey) return;
  const links = [...event.currentTarget.querySelectorAll<HTMLAnchorElement>("a.np-nav-item")];
  const index = links.indexOf(document.activeElement as HTMLAnchorElement);
  if (index < 0) return;
  event.preventDefault();
  links[move(index, links.length)]?.focus();
}

export function SideNav({
  sections,
  selected,
  narrowed,
  onNavigate,
}: {
  sections: NavSection[];
  selected: string | undefined;
  narrowed: boolean;
  onNavigate?: () => void;
}) {
  const id = useId();
  return (
    <nav aria-label="Main" className="np-nav" data-narrowed={narrowed || undefined} onKeyDown={moveFocus}>
      <Link to="/" className="np-brand" onClick={onNavigate}>
        <span className="np-logo" aria-hidden="true">
          N
        </span>
        <span className={narrowed ? "np-sr-only" : undefined}>Nodeplane</span>
      </Link>
      {sections.map((section, index) => (
        <div key={section.section} className="np-nav-section">
          <div id={`${id}-${index}`} className={narrowed ? "np-sr-only" : "np-nav-title"}>
            {section.section}
          </div>
          <ul aria-labelledby={`${id}-${index}`}>
            {section.items.map((item) => (
              <li key={item.id}>
                <Link
                  to={item.route}
                  className="np-nav-item"
                  aria-current={item.id === selected ? "page" : undefined}
                  title={narrowed ? item.label : undefined}
                  onClick={onNavigate}
                >
                  <span className="np-nav-icon" aria-hidden="true">
                    {icon(item.icon)}
                  </span>
                  <span className={narrowed ? "np-sr-only" : "np-nav-label"}>{item.label}</span>
                </Link>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}
