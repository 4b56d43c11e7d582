import "./styles.css";
import "./icons.ts";
import "./widgets/index.ts";
import { App as AntApp, ConfigProvider } from "antd";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter } from "react-router";
import { SWRConfig } from "swr";
import { createHttpTransport } from "../renderer/index.ts";
import { Shell } from "./Shell.tsx";
import { theme } from "./theme.ts";

const transport = createHttpTransport("/graphql");
const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");

createRoot(root).render(
  <StrictMode>
    <ConfigProvider theme={theme}>
      <AntApp>
        <SWRConfig value={{ errorRetryCount: 2 }}>
          <BrowserRouter>
            <Shell transport={transport} />
          </BrowserRouter>
        </SWRConfig>
      </AntApp>
    </ConfigProvider>
  </StrictMode>,
);
