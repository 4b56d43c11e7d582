import { Alert, Button, Form, Input } from "antd";
import { useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { GqlError, type Transport } from "../../renderer/core.ts";
import { SIGN_IN_DOCUMENT } from "../session.ts";
import { AuthLayout } from "./AuthLayout.tsx";

/** What to tell someone whose sign-in failed, by error code (a refusal's own message says when to try again). */
export function signInError(error: unknown): string {
  if (error instanceof GqlError) {
    if (error.code === "UNAUTHENTICATED" || error.code === "BAD_USER_INPUT" || error.code === "NOT_FOUND")
      return "The email or password is incorrect.";
    return error.message;
  }
  return "Cannot reach the service. Check your connection and try again.";
}

export function SignIn({ transport, onSignedIn }: { transport: Transport; onSignedIn: () => Promise<unknown> }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [params] = useSearchParams();
  const navigate = useNavigate();

  async function submit(values: { email: string; password: string }) {
    setBusy(true);
    setError(null);
    try {
      await transport(SIGN_IN_DOCUMENT, values);
      await onSignedIn();
      const next = params.get("next");
      navigate(next?.startsWith("/") && !next.startsWith("//") ? next : "/", { replace: true });
    } catch (caught) {
      setError(signInError(caught));
    } finally {
      setBusy(false);
    }
  }

  return (
    <AuthLayout title="Sign in" subtitle="Manage your endpoints, usage and team.">
      {error ? <Alert type="error" showIcon title={error} style={{ marginBottom: 16 }} role="alert" /> : null}
      <Form layout="vertical" onFinish={submit} requiredMark={false} disabled={busy}>
        <Form.Item
          label="Email"
          name="email"
          rules={[{ required: true, type: "email", message: "Enter your email address" }]}
        >
          <Input type="email" autoComplete="email" autoFocus />
        </Form.Item>
        <Form.Item label="Password" name="password" rules={[{ required: true, message: "Enter your password" }]}>
          <Input.Password autoComplete="current-password" />
        </Form.Item>
        <Button type="primary" htmlType="submit" block loading={busy}>
          Sign in
        </Button>
      </Form>
      <p className="np-auth-switch">
        New to Nodeplane? <Link to="/sign-up">Create an account</Link>
      </p>
    </AuthLayout>
  );
}
