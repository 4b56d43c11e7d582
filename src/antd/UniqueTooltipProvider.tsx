// antd's tooltip UniqueProvider (one shared popup for every tooltip, `<ConfigProvider tooltip={{ unique:
// true }}>`), loaded when a ConfigProvider first asks for it. antd's ConfigProvider imports it statically
// and with it the whole popup engine (@rc-component/trigger, ~12 kB gzip), although it draws it only for
// that option: vite.config.ts points the ConfigProvider's import here.
import { lazy, type ReactNode, Suspense } from "react";

const UniqueProvider = lazy(() => import("antd/es/tooltip/UniqueProvider/index.js"));

export default function UniqueTooltipProvider({ children }: { children?: ReactNode }) {
  return (
    <Suspense fallback={null}>
      <UniqueProvider>{children}</UniqueProvider>
    </Suspense>
  );
}
