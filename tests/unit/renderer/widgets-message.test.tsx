// @vitest-environment jsdom
// A message's addresses are links one can open and copy (the verification link in Notifications was plain
// text cut off in its cell), its lines are kept, and text that only looks like an address stays text.
import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";

afterEach(cleanup);

describe("message", () => {
  it("makes each http(s) address a link with a copy button and keeps the rest as text", async () => {
    const { getWidget } = await import("../../../renderer/widgets/registry.ts");
    await import("../../../renderer/widgets/builtins.tsx");
    const Message = getWidget("message")?.read;
    if (!Message) throw new Error("message is not registered");
    const body = [
      "Open this link to verify your e-mail address for Nodeplane:",
      "",
      "http://localhost:8080/verify-email?token=abc_DEF-123.",
      "",
      "Not a link: javascript:alert(1) or ftp://files.example (see https://nodeplane.example/docs).",
    ].join("\n");
    const { container } = render(<Message value={body} options={{}} />);
    const links = [...container.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual([
      "http://localhost:8080/verify-email?token=abc_DEF-123",
      "https://nodeplane.example/docs",
    ]);
    expect(links.every((a) => a.getAttribute("target") === "_blank" && a.getAttribute("rel") === "noreferrer")).toBe(
      true,
    );
    expect(container.querySelectorAll("button[aria-label='Copy link']")).toHaveLength(2);
    expect(container.textContent).toBe(body);
  });
});
