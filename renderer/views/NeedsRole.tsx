// What a screen's address shows to a member whose role does not open it: which role it needs, from
// the manifest's `requires.role`, instead of a page that fails on its first operation.
import { Button, Result } from "antd";
import { Link } from "react-router";
import { roleLabel } from "../permissions.ts";
import type { Role } from "../types.ts";

export function NeedsRole({ title, needed, have }: { title: string; needed: Role; have: string }) {
  return (
    <Result
      status="403"
      data-needs-role={needed}
      title={`This page needs the ${roleLabel(needed)} role`}
      subTitle={`“${title}” is for members with the ${roleLabel(needed)} role. Your role is ${roleLabel(have)}: ask the account's owner or an admin if you need it.`}
      extra={
        <Link to="/">
          <Button>Back to the dashboard</Button>
        </Link>
      }
    />
  );
}
