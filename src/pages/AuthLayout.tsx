import { Card, Typography } from "antd";
import type { ReactNode } from "react";

export function AuthLayout({
  title,
  subtitle,
  children,
}: {
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="np-auth">
      <div className="np-auth-brand">
        <span className="np-logo" aria-hidden>
          N
        </span>
        <span>Nodeplane</span>
      </div>
      <Card className="np-auth-card">
        <Typography.Title level={3} style={{ marginTop: 0 }}>
          {title}
        </Typography.Title>
        {subtitle ? <Typography.Paragraph type="secondary">{subtitle}</Typography.Paragraph> : null}
        {children}
      </Card>
    </div>
  );
}
