// A list's pager: the total and the rows shown, the page size, Previous and Next (server-side paging).
import { Button, Select, Space, Typography } from "antd";
import type { ListState } from "./useListState.ts";

/** The page sizes offered; the service serves pages up to the largest (MAX_PAGE_SIZE in server/platform/paging.ts). */
export const PAGE_SIZES = [10, 25, 50, 100, 250, 500];

export function ListPager({ paging, shown }: { paging: NonNullable<ListState["paging"]>; shown: number }) {
  const { total } = paging;
  return (
    <div className="np-pager">
      <Typography.Text type="secondary">
        {total !== undefined ? `${total.toLocaleString("en")} total` : null}
        {total !== undefined && shown ? " · " : null}
        {shown ? `showing ${shown}` : null}
      </Typography.Text>
      <Space size={8}>
        <Select
          size="small"
          aria-label="Rows per page"
          value={paging.pageSize}
          onChange={paging.setPageSize}
          options={PAGE_SIZES.map((size) => ({ value: size, label: `${size} / page` }))}
        />
        <Button size="small" disabled={!paging.hasPrevious} onClick={paging.previous}>
          Previous
        </Button>
        <Button size="small" disabled={!paging.hasNext} onClick={paging.next}>
          Next
        </Button>
      </Space>
    </div>
  );
}
