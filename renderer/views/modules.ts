// Where each view kind's code is: the screens load a kind when they first show one, and the screen
// preload (renderer/preload.ts) starts the first screen's kinds as soon as the registry answers.
import type { View } from "../types.ts";

export const VIEW_MODULES = {
  list: () => import("./ListView.tsx").then((module) => ({ default: module.ListView })),
  detail: () => import("./DetailView.tsx").then((module) => ({ default: module.DetailView })),
  form: () => import("./FormView.tsx").then((module) => ({ default: module.FormView })),
  chart: () => import("./ChartView.tsx").then((module) => ({ default: module.ChartView })),
  custom: () => import("./CustomView.tsx").then((module) => ({ default: module.CustomView })),
  alert: () => import("./AlertView.tsx").then((module) => ({ default: module.AlertView })),
} satisfies Record<View["kind"], unknown>;
