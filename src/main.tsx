import "./styles.css";
import { ConfigProvider } from "antd";
import { type ReactNode, StrictMode, useMemo } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter } from "react-router";
import { SWRConfig } from "swr";
import { createHttpTransport, useReducedMotion } from "../renderer/core.ts";
import { Shell } from "./Shell.tsx";
import { theme } from "./theme.ts";

const transport = createHttpTransport("/graphql");

/** antd's theme, with its animations off while the system asks for reduced motion. */
function Themed({ children }: { children: ReactNode }) {
  const reduced = useReducedMotion();
  const themed = useMemo(() => ({ ...theme, token: { ...theme.token, motion: !reduced } }), [reduced]);
  return <ConfigProvider theme={themed}>{children}</ConfigProvider>;
}
const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");

createRoot(root).render(
  <StrictMode>
    <Themed>
      <SWRConfig value={{ errorRetryCount: 2 }}>
        <BrowserRouter>
          <Shell transport={transport} />
        </BrowserRouter>
      </SWRConfig>
    </Themed>
  </StrictMode>,
);
