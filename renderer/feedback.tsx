// Messages and confirmations (antd's message and Modal.confirm), with antd's modal and message code
// loaded when the first one is shown: a screen that only lists does not download them. The holders
// render inside the provider, so they take the console's theme as antd's App would give them.
import { theme } from "antd";
import type { MessageInstance } from "antd/es/message/interface";
import type { HookAPI as ModalHookAPI } from "antd/es/modal/useModal";
import { createContext, lazy, type ReactNode, Suspense, useContext, useMemo, useState } from "react";

export interface FeedbackApi {
  message: MessageInstance;
  modal: ModalHookAPI;
}

const FeedbackHost = lazy(() => import("./FeedbackHost.tsx"));

interface FeedbackContextValue {
  /** Resolves with antd's message and modal APIs once their code has loaded and their holders render. */
  ready: () => Promise<FeedbackApi>;
}

const FeedbackContext = createContext<FeedbackContextValue | null>(null);

/**
 * What antd's App gave the console: the text colour, size and font on everything inside, and the
 * holders of messages and confirmations (mounted at the first use).
 */
export function FeedbackProvider({ children }: { children: ReactNode }) {
  const { token } = theme.useToken();
  const [wanted, setWanted] = useState(false);
  const host = useMemo(() => {
    let resolve: (api: FeedbackApi) => void = () => undefined;
    const api = new Promise<FeedbackApi>((done) => {
      resolve = done;
    });
    return { api, resolve };
  }, []);
  const value = useMemo<FeedbackContextValue>(
    () => ({
      ready: () => {
        setWanted(true);
        return host.api;
      },
    }),
    [host],
  );
  return (
    <FeedbackContext.Provider value={value}>
      <div
        className="np-app"
        style={{
          color: token.colorText,
          fontSize: token.fontSize,
          lineHeight: token.lineHeight,
          fontFamily: token.fontFamily,
        }}
      >
        {children}
      </div>
      {wanted ? (
        <Suspense fallback={null}>
          <FeedbackHost onReady={host.resolve} />
        </Suspense>
      ) : null}
    </FeedbackContext.Provider>
  );
}

type MessageKind = "success" | "error" | "info" | "warning";

/** Shows messages and confirmations; each call waits for antd's code the first time. */
export function useFeedback() {
  const context = useContext(FeedbackContext);
  if (!context) throw new Error("useFeedback needs a FeedbackProvider");
  return useMemo(() => {
    const show = (kind: MessageKind) => (content: ReactNode) => {
      void context.ready().then((api) => {
        api.message[kind](content);
      });
    };
    return {
      message: { success: show("success"), error: show("error"), info: show("info"), warning: show("warning") },
      modal: {
        confirm: (config: Parameters<ModalHookAPI["confirm"]>[0]) => {
          void context.ready().then((api) => {
            api.modal.confirm(config);
          });
        },
      },
    };
  }, [context]);
}
