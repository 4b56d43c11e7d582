// The console's pager and the service's page-size rule are two sides of one contract: every size the
// pager offers must be a page the service serves, or choosing it fails the list.
import { expect, it } from "vitest";
import { PAGE_SIZES } from "../../renderer/views/ListPager.tsx";
import { MAX_PAGE_SIZE } from "../../server/platform/paging.ts";

it("offers no page size the service refuses", () => {
  expect(Math.max(...PAGE_SIZES)).toBeLessThanOrEqual(MAX_PAGE_SIZE);
});
