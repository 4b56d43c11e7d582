import type { ReactNode } from "react";

/** A page of its own, centred: the shell's loading and error states. */
export function FullPage({ children }: { children: ReactNode }) {
  return <div className="np-fullpage">{children}</div>;
}
