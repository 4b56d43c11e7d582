import { Alert, Button, Form, Input } from "antd";
import { useState } from "react";
import { Link, useNavigate } from "react-router";
import { GqlError, type Transport } from "../../renderer/core.ts";
import { SIGN_UP_DOCUMENT } from "../session.ts";
import { AuthLayout } from "./AuthLayout.tsx";

// Mirrors account#/$defs/signUpInput (the registry, and so the schema, is only served once signed
// in); the service validates with the schema itself and its field errors are shown here.
const PASSWORD_MIN = 10;

interface Values {
  email: string;
  password: string;
  fullName?: string;
  companyName?: string;
}

export function SignUp({ transport, onSignedIn }: { transport: Transport; onSignedIn: () => Promise<unknown> }) {
  const [form] = Form.useForm<Values>();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const navigate = useNavigate();

  async function submit(values: Values) {
    setBusy(true);
    setError(null);
    try {
      const input = Object.fromEntries(Object.entries(values).filter(([, value]) => value));
      await transport(SIGN_UP_DOCUMENT, { input });
      await onSignedIn();
      navigate("/", { replace: true });
    } catch (caught) {
      if (caught instanceof GqlError && caught.fields.length) {
        form.setFields(
          caught.fields.map((field) => ({
            name: field.pointer.split("/")[1] as keyof Values,
            errors: [field.message],
          })),
        );
      } else if (caught instanceof GqlError && caught.code === "CONFLICT") {
        form.setFields([{ name: "email", errors: ["An account with this email already exists."] }]);
      } else {
        // The service's message, also for RATE_LIMITED: it says when to try again.
        setError(caught instanceof Error ? caught.message : String(caught));
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <AuthLayout title="Create your account" subtitle="Start with a free plan; no card needed.">
      {error ? <Alert type="error" showIcon title={error} style={{ marginBottom: 16 }} role="alert" /> : null}
      <Form form={form} layout="vertical" onFinish={submit} requiredMark="optional" disabled={busy}>
        <Form.Item
          label="Email"
          name="email"
          rules={[{ required: true, type: "email", message: "Enter a valid email address" }]}
        >
          <Input type="email" autoComplete="email" autoFocus />
        </Form.Item>
        {/* The rule under the field gives way to the error, which says it again. */}
        <Form.Item noStyle shouldUpdate>
          {() => (
            <Form.Item
              label="Password"
              name="password"
              extra={form.getFieldError("password").length ? undefined : `At least ${PASSWORD_MIN} characters.`}
              rules={[{ required: true, min: PASSWORD_MIN, message: `Use at least ${PASSWORD_MIN} characters` }]}
            >
              <Input.Password autoComplete="new-password" />
            </Form.Item>
          )}
        </Form.Item>
        <Form.Item label="Full name" name="fullName" rules={[{ max: 120 }]}>
          <Input autoComplete="name" />
        </Form.Item>
        <Form.Item label="Company" name="companyName" rules={[{ max: 120 }]}>
          <Input autoComplete="organization" />
        </Form.Item>
        <Button type="primary" htmlType="submit" block loading={busy}>
          Create account
        </Button>
      </Form>
      <p className="np-auth-switch">
        Already have an account? <Link to="/sign-in">Sign in</Link>
      </p>
    </AuthLayout>
  );
}
