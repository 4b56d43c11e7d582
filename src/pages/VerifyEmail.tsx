import { Alert, Button, Spin } from "antd";
import { useEffect, useRef, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { errorMessage, type Transport } from "../../renderer/core.ts";
import { type MutationResult, VERIFY_EMAIL_DOCUMENT } from "../session.ts";
import { AuthLayout } from "./AuthLayout.tsx";

// A link works once: the call for a token is made once per page load, also when React runs the effect twice.
const verifications = new Map<string, Promise<MutationResult>>();

function verifyOnce(transport: Transport, token: string): Promise<MutationResult> {
  let verification = verifications.get(token);
  if (!verification) {
    verification = transport(VERIFY_EMAIL_DOCUMENT, { token }).then((data) => data.verifyEmail as MutationResult);
    verifications.set(token, verification);
  }
  return verification;
}

/**
 * The page a verification e-mail's link opens, signed in or not: it verifies the address and says so,
 * or says why not and how to get a new link.
 */
export function VerifyEmail({
  transport,
  signedIn,
  onVerified,
}: {
  transport: Transport;
  signedIn: boolean;
  onVerified: () => Promise<unknown>;
}) {
  const [params] = useSearchParams();
  const token = params.get("token") ?? "";
  const [result, setResult] = useState<MutationResult | null>(null);
  // The latest callback, so a new one from a re-render does not verify again.
  const verified = useRef(onVerified);
  verified.current = onVerified;

  useEffect(() => {
    let current = true;
    verifyOnce(transport, token)
      .then(async (answer) => {
        if (answer.success) await verified.current();
        if (current) setResult(answer);
      })
      .catch((error: unknown) => {
        if (current) setResult({ success: false, message: null, error: errorMessage(error) });
      });
    return () => {
      current = false;
    };
  }, [transport, token]);

  return (
    <AuthLayout title="Verify your email address">
      {result === null ? (
        <Spin aria-label="Verifying" />
      ) : (
        <Alert
          type={result.success ? "success" : "error"}
          showIcon
          role={result.success ? "status" : "alert"}
          title={result.success ? result.message : result.error}
          style={{ marginBottom: 16 }}
        />
      )}
      <Link to={signedIn ? "/" : "/sign-in"}>
        <Button type="primary" block>
          {signedIn ? "Go to the console" : "Sign in"}
        </Button>
      </Link>
    </AuthLayout>
  );
}
