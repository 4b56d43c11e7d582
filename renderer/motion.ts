import { useMediaQuery } from "./media.ts";

/** Whether the system asks for reduced motion, following changes to the setting. */
export function useReducedMotion(): boolean {
  return useMediaQuery("(prefers-reduced-motion: reduce)");
}
