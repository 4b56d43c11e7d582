// The Stay-or-Leave question of renderer/leaveGuard.tsx, loaded (with antd's Modal) when a navigation
// is first held.
import { Button, Modal } from "antd";
import { LEAVE_QUESTION, LEAVE_TITLE } from "./leaveGuard.tsx";

export default function LeaveDialog({ onStay, onLeave }: { onStay: () => void; onLeave: () => void }) {
  return (
    <Modal
      open
      title={LEAVE_TITLE}
      onCancel={onStay}
      footer={[
        // Staying is the safe answer, so it takes focus and Enter.
        <Button key="stay" type="primary" autoFocus onClick={onStay}>
          Stay
        </Button>,
        <Button key="leave" danger onClick={onLeave}>
          Leave
        </Button>,
      ]}
    >
      {LEAVE_QUESTION}
    </Modal>
  );
}
