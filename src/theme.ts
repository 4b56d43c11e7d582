import type { ThemeConfig } from "antd";

export const theme: ThemeConfig = {
  token: {
    colorPrimary: "#1f5eff",
    // Progress bars and info notices take the info colour: the brand's, not antd's default blue.
    colorInfo: "#1f5eff",
    borderRadius: 8,
    fontFamily: "Inter, system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif",
    colorBgLayout: "#f5f7fb",
    // Secondary text, placeholders and links at 4.5:1 or more on white and on the page background
    // (antd's defaults are about 3.3:1, 1.8:1 and 4.1:1).
    colorLink: "#1f5eff",
    // A hovered or pressed link darkens (7.3:1 on white): antd's derived hover colour is lighter, 2.5:1.
    colorLinkHover: "#1848d0",
    colorLinkActive: "#133aa8",
    colorTextSecondary: "#5c6370",
    colorTextTertiary: "#5c6370",
    colorTextDescription: "#5c6370",
    colorTextPlaceholder: "#5c6370",
    colorTextDisabled: "#6b7280",
    colorError: "#d9363e",
  },
  components: {
    Menu: { itemBorderRadius: 6, itemMarginInline: 8, groupTitleFontSize: 11, groupTitleColor: "#5c6370" },
    Table: { headerBg: "#fafbfd" },
  },
};
