// The custom range of a list's time-range control: its own module, since the date picker (with its
// calendar and date library) is the largest control a list can show and only this choice needs it.
import { DatePicker } from "antd";

export default function CustomRangePicker({
  onPicked,
  onClose,
}: {
  onPicked: (range: { from: string; to: string }) => void;
  onClose: () => void;
}) {
  return (
    <DatePicker.RangePicker
      showTime={{ format: "HH:mm" }}
      format="YYYY-MM-DD HH:mm"
      open
      autoFocus
      aria-label="Custom time range"
      onOpenChange={(open) => !open && onClose()}
      onChange={(dates) => {
        const [from, to] = dates ?? [];
        if (from && to) onPicked({ from: from.toDate().toISOString(), to: to.toDate().toISOString() });
        onClose();
      }}
    />
  );
}
