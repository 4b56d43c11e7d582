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
  // The page's main landmark, its title the page's h1 (at the size of the h3 it was).
  return (
    <main
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
        <Typography.Title level={1} style={{ marginTop: 0, fontSize: 24, lineHeight: 1.33 }}>
          {title}
        </Typography.Title>
        {subtitle ? <Typography.Paragraph type="secondary">{subtitle}</Typography.Paragraph> : null}
        {children}
      </section>
    </main>
  );
}
