// Text the theme colours (links, their hover and pressed states, secondary text) reads at 4.5:1 or
// more (WCAG AA) on white and on the page background. antd derives a link's hover colour lighter
// than the link: unset, it read 2.5:1.
import { describe, expect, it } from "vitest";
import { theme } from "../../../src/theme.ts";

const luminance = (hex: string) => {
  const channels = [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16) / 255);
  const [r, g, b] = channels.map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a: string, b: string) => {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
};

describe("the theme's text colours", () => {
  const token = theme.token ?? {};
  const texts = [
    "colorLink",
    "colorLinkHover",
    "colorLinkActive",
    "colorTextSecondary",
    "colorTextPlaceholder",
  ] as const;

  it.each(texts)("%s reads at 4.5:1 on white and on the page background", (name) => {
    const colour = token[name];
    expect(colour, name).toMatch(/^#[0-9a-f]{6}$/i);
    for (const background of ["#ffffff", token.colorBgLayout as string])
      expect(contrast(colour as string, background), `${name} on ${background}`).toBeGreaterThanOrEqual(4.5);
  });
});
