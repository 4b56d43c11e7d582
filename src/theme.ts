import type { ThemeConfig } from "antd";

export const theme: ThemeConfig = {
  token: {
    colorPrimary: "#1f5eff",
    borderRadius: 8,
    fontFamily: "Inter, system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif",
    colorBgLayout: "#f5f7fb",
  },
  components: {
    Layout: { headerBg: "#ffffff", siderBg: "#ffffff", headerHeight: 56, headerPadding: "0 16px" },
    Menu: { itemBorderRadius: 6, itemMarginInline: 8, groupTitleFontSize: 11 },
    Table: { headerBg: "#fafbfd" },
  },
};
