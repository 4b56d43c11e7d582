// The holders of antd's messages and confirmations, loaded at the first one (renderer/feedback.tsx).
import { Modal, message } from "antd";
import { useEffect } from "react";
import type { FeedbackApi } from "./feedback.tsx";

export default function FeedbackHost({ onReady }: { onReady: (api: FeedbackApi) => void }) {
  const [messageApi, messageHolder] = message.useMessage();
  const [modalApi, modalHolder] = Modal.useModal();
  useEffect(() => onReady({ message: messageApi, modal: modalApi }), [onReady, messageApi, modalApi]);
  return (
    <>
      {messageHolder}
      {modalHolder}
    </>
  );
}
