import { Button, Result } from "antd";
import { Link } from "react-router";

export function NotFound() {
  return (
    <Result
      status="404"
      title="Page not found"
      subTitle="The page you asked for does not exist, or you do not have access to it."
      extra={
        <Link to="/">
          <Button type="primary">Back to the dashboard</Button>
        </Link>
      }
    />
  );
}

/** A page that could not load what it needs, with a way to try again. */
export function LoadFailed({ title, detail, onRetry }: { title: string; detail: string; onRetry: () => void }) {
  return <Result status="error" title={title} subTitle={detail} extra={<Button onClick={onRetry}>Try again</Button>} />;
}
