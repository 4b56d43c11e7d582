// A list's pager: the total and the rows shown, the page size, Previous and Next (server-side paging).
// The page size is a native select in antd's small look: antd's Select would bring ~22 kB gzip to every
// first list for one choice among six.
import { Button, Space } from "antd";
import type { ListState } from "./useListState.ts";

/** The page sizes offered; the service serves pages up to the largest (MAX_PAGE_SIZE in server/platform/paging.ts). */
export const PAGE_SIZES = [10, 25, 50, 100, 250, 500];

/**
 * Nothing to page, nothing to show: an empty first page has no pager (its empty state says why), and a
 * page with neither a page before nor after it keeps its count but no Previous or Next.
 */
export function ListPager({ paging, shown }: { paging: NonNullable<ListState["paging"]>; shown: number }) {
  const { total } = paging;
  const pages = paging.hasPrevious || paging.hasNext;
  if (!pages && shown === 0) return null;
  // A manifest's own page size (20) is offered too, or the select would name another size than the page has.
  const sizes = PAGE_SIZES.includes(paging.pageSize)
    ? PAGE_SIZES
    : [...PAGE_SIZES, paging.pageSize].sort((a, b) => a - b);
  return (
    <div className="np-pager">
      <span className="np-muted">
        {total !== undefined ? `${total.toLocaleString("en")} total` : null}
        {total !== undefined && shown ? " · " : null}
        {shown ? `showing ${shown}` : null}
      </span>
      <Space size={8}>
        <select
          className="np-native-select"
          aria-label="Rows per page"
          value={paging.pageSize}
          onChange={(event) => paging.setPageSize(Number(event.target.value))}
        >
          {sizes.map((size) => (
            <option key={size} value={size}>{`${size} / page`}</option>
          ))}
        </select>
        {pages ? (
          <>
            <Button size="small" disabled={!paging.hasPrevious} onClick={paging.previous}>
              Previous
            </Button>
            <Button size="small" disabled={!paging.hasNext} onClick={paging.next}>
              Next
            </Button>
          </>
        ) : null}
      </Space>
    </div>
  );
}
