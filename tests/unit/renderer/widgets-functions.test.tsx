// @vitest-environment jsdom
// The function page's cURL commands against the recorded function: its own HTTP address, the session
// cookie to replace, a body per sample (user data; a block), a copy of the whole command, and shell
// quoting that keeps a body's single quotes.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { resolveSchemaRef } from "../../../renderer/schema.ts";
import { callAddress, curlCommand, shellQuote } from "../../../renderer/widgets/curl.tsx";
import { installDomStandIns, recordedResponses, registryFor, renderRoute, viewerFor } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const recordedFunction = recordedResponses.Function?.data as { function: { id: string; callUrl: string } } | undefined;
if (!recordedFunction) throw new Error("the fixtures hold no recorded Function response");
const { function: fn } = recordedFunction;

describe("curl", () => {
  it("quotes words for a shell, a single quote inside included", () => {
    expect(shellQuote(`{"user_data":"it's"}`)).toBe(`'{"user_data":"it'\\''s"}'`);
    expect(curlCommand("http://h/f", "POST", { Cookie: "a=b" }, { x: 1 })).toBe(
      `curl -X POST 'http://h/f' \\\n  -H 'Content-Type: application/json' \\\n  -H 'Cookie: a=b' \\\n  -d '{"x":1}'`,
    );
    expect(curlCommand("http://h/f", "GET", {})).toBe("curl -X GET 'http://h/f'");
  });

  it("takes a path from the page's origin and keeps an absolute address", () => {
    expect(callAddress("/functions/f1/call", "https://console.example")).toBe(
      "https://console.example/functions/f1/call",
    );
    expect(callAddress("http://localhost:8197/functions/f1/call", "https://console.example")).toBe(
      "http://localhost:8197/functions/f1/call",
    );
  });

  it("shows the function's cURL commands, says what authenticates them, and copies a whole command", async () => {
    const writeText = vi.fn(async (_text: string) => {});
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText } });
    const { container } = render(
      renderRoute(`/functions/${fn.id}`, { registry: registryFor("owner"), viewer: viewerFor("OWNER") }),
    );
    const command = await screen.findByText(/curl -X POST/, {}, { timeout: 10_000 });
    const text = command.textContent ?? "";
    expect(text).toContain(`curl -X POST '${fn.callUrl}'`);
    expect(text).toContain("-H 'x-api-key: YOUR_API_KEY'");
    expect(text).toContain(`-d '{"user_data":{"address":"0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"}}'`);
    expect(container.textContent).toContain("authenticated by an API key with the Admin role made for Functions");

    fireEvent.click(screen.getByRole("button", { name: "Copy the cURL command (With user data)" }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(text));

    fireEvent.click(screen.getByRole("tab", { name: "On a block" }));
    await waitFor(() =>
      expect(container.textContent).toContain(
        `-d '{"network":"ethereum-mainnet","dataset":"BLOCK","block":"latest","user_data":{}}'`,
      ),
    );
  }, 30_000);
});

describe("log-lines", () => {
  it("shows each console line with its level, in order, and says when nothing was logged", async () => {
    const { getWidget } = await import("../../../renderer/widgets/registry.ts");
    await import("../../../renderer/widgets/builtins.tsx");
    const LogLinesView = getWidget("log-lines")?.read;
    if (!LogLinesView) throw new Error("log-lines is not registered");
    const logs = [
      { level: "INFO", message: 'called with {"who":"me"}' },
      { level: "ERROR", message: "boom\n  at main (line 3)" },
    ];
    // Levels in words, by the labels of the schema the runner output names (as the Logs tab's column).
    const schema = resolveSchemaRef(registryFor("owner").schemas, "function-activation#/properties/logs");
    const { container } = render(
      <LogLinesView value={logs} schema={schema} options={{ emptyText: "Nothing logged" }} />,
    );
    const lines = [...container.querySelectorAll(".np-log-line")];
    expect(lines.map((line) => line.getAttribute("data-level"))).toEqual(["INFO", "ERROR"]);
    expect(lines[1]?.textContent).toBe("Errorboom\n  at main (line 3)");
    cleanup();
    render(<LogLinesView value={[]} options={{ emptyText: "Nothing logged" }} />);
    expect(screen.getByText("Nothing logged")).toBeTruthy();
  }, 30_000);
});
