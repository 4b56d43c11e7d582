import { Typography, theme } from "antd";
import type { CSSProperties, ReactNode } from "react";

// A plain panel rather than antd's Card: Card brings Tabs, Dropdown and Menu along (its tab list), which
// sign-in would download for nothing. Text and links outside antd's components take the theme's font
// and colours here, as antd's App does for the signed-in console.
export function AuthLayout({
  title,
  subtitle,
  children,
}: {
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
}) {
  const { token } = theme.useToken();
  return (
    <div
      className="np-auth"
      style={
        {
          fontFamily: token.fontFamily,
          fontSize: token.fontSize,
          lineHeight: token.lineHeight,
          "--np-auth-link": token.colorLink,
          "--np-auth-link-hover": token.colorLinkHover,
        } as CSSProperties
      }
    >
      <div className="np-auth-brand">
        <span className="np-logo" aria-hidden>
          N
        </span>
        <span>Nodeplane</span>
      </div>
      <section
        className="np-auth-card"
        style={{
          background: token.colorBgContainer,
          border: `${token.lineWidth}px ${token.lineType} ${token.colorBorderSecondary}`,
          borderRadius: token.borderRadiusLG,
          padding: token.paddingLG,
          color: token.colorText,
        }}
      >
        <Typography.Title level={3} style={{ marginTop: 0 }}>
          {title}
        </Typography.Title>
        {subtitle ? <Typography.Paragraph type="secondary">{subtitle}</Typography.Paragraph> : null}
        {children}
      </section>
    </div>
  );
}
