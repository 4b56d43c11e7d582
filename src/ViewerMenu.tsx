// The header's viewer button: the initial, e-mail and role; it opens a small panel with the e-mail and
// "Sign out" (a disclosure: Escape or a click elsewhere closes it, focus goes back to the button). Our
// own, as antd's Dropdown and Menu would load on every first screen for one button.
import { LogoutOutlined } from "@ant-design/icons";
import { Button, Tag } from "antd";
import { useEffect, useId, useRef, useState } from "react";
import { humanize, type Viewer } from "../renderer/index.ts";

const ROLE_COLORS: Record<string, string> = { OWNER: "gold", ADMIN: "blue", VIEWER: "default" };

export function ViewerMenu({ viewer, onSignOut }: { viewer: Viewer; onSignOut: () => void }) {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const root = useRef<HTMLDivElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const signOut = useRef<HTMLButtonElement>(null);
  const name = viewer.userFullName ? String(viewer.userFullName) : viewer.email;

  useEffect(() => {
    if (!open) return;
    signOut.current?.focus();
    const onPointerDown = (event: PointerEvent) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      setOpen(false);
      trigger.current?.focus();
    };
    document.addEventListener("pointerdown", onPointerDown);
    document.addEventListener("keydown", onKeyDown);
    return () => {
      document.removeEventListener("pointerdown", onPointerDown);
      document.removeEventListener("keydown", onKeyDown);
    };
  }, [open]);

  return (
    <div className="np-viewer-menu" ref={root}>
      <Button
        ref={trigger}
        type="text"
        className="np-viewer"
        data-testid="viewer-menu"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => setOpen(!open)}
      >
        <span className="np-avatar" aria-hidden="true">
          {name.charAt(0).toUpperCase()}
        </span>
        <span className="np-viewer-email">{viewer.email}</span>
        <Tag color={ROLE_COLORS[viewer.userRole] ?? "default"} style={{ marginInlineEnd: 0 }}>
          {humanize(viewer.userRole)}
        </Tag>
      </Button>
      <div id={panelId} className="np-viewer-panel" hidden={!open}>
        <div className="np-muted np-viewer-panel-email">{viewer.email}</div>
        <button type="button" ref={signOut} className="np-viewer-panel-item" onClick={onSignOut}>
          <LogoutOutlined aria-hidden="true" /> Sign out
        </button>
      </div>
    </div>
  );
}
