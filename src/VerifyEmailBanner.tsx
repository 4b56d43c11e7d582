import { Alert, Button, Space, Typography } from "antd";
import { useState } from "react";
import { Link } from "react-router";
import useSWR from "swr";
import { errorMessage, type Transport } from "../renderer/core.ts";
import { EMAIL_CONNECTED_DOCUMENT, type MutationResult, RESEND_VERIFICATION_DOCUMENT } from "./session.ts";

/**
 * Above every page until the signed-in user's address is verified: where the link was sent, and a way
 * to send a new one. Nothing waits on verification, so the banner asks for it without threatening.
 * Without a mail server the message never leaves: it says so and where the message is, as the
 * notifications page does.
 */
export function VerifyEmailBanner({ transport, email }: { transport: Transport; email: string }) {
  const connected = useSWR(["emailConnected"], async () => {
    const data = await transport(EMAIL_CONNECTED_DOCUMENT);
    return (data.notificationOutbox as { emailConnected: boolean }).emailConnected;
  });
  const [sending, setSending] = useState(false);
  const [answer, setAnswer] = useState<MutationResult | null>(null);

  async function resend() {
    setSending(true);
    try {
      setAnswer((await transport(RESEND_VERIFICATION_DOCUMENT)).resendVerificationEmail as MutationResult);
    } catch (error) {
      setAnswer({ success: false, message: null, error: errorMessage(error) });
    } finally {
      setSending(false);
    }
  }

  // Said only once the answer is in, so a connected service never shows the outbox sentence.
  const notConnected =
    connected.data === false ? (
      <>
        E-mail is not connected on this service, so no message leaves it: open the link from{" "}
        <Link to="/streams/notifications">Notifications</Link>.
      </>
    ) : null;
  return (
    <Alert
      type="info"
      showIcon
      banner
      title={
        connected.data === false
          ? `Verify your email address: the link for ${email} waits in the outbox.`
          : `Verify your email address: we sent a link to ${email}.`
      }
      description={
        notConnected || answer ? (
          <Space orientation="vertical" size={4}>
            {notConnected ? <span>{notConnected}</span> : null}
            {/* A refusal is set apart by weight: antd's red on the banner's blue fails contrast. */}
            {answer ? (
              <Typography.Text role={answer.success ? "status" : "alert"} strong={!answer.success}>
                {answer.success ? answer.message : answer.error}
              </Typography.Text>
            ) : null}
          </Space>
        ) : null
      }
      action={
        <Button size="small" onClick={() => void resend()} loading={sending}>
          Resend email
        </Button>
      }
      style={{ marginBottom: 16 }}
    />
  );
}
