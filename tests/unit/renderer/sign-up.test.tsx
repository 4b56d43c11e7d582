// @vitest-environment jsdom
// The sign-up page: its password rule is said once, before and after a refusal.

import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { SignUp } from "../../../src/pages/SignUp.tsx";
import { installDomStandIns } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

describe("sign up", () => {
  it("says the password rule under the field, and once when a short password is refused", async () => {
    const sent: unknown[] = [];
    const { container } = render(
      <MemoryRouter>
        <SignUp
          transport={async (_document, variables) => {
            sent.push(variables);
            return {};
          }}
          onSignedIn={async () => {}}
        />
      </MemoryRouter>,
    );
    const said = () => (container.textContent ?? "").match(/at least 10 characters/gi)?.length ?? 0;
    expect(said()).toBe(1);
    fireEvent.change(screen.getByLabelText("Email"), { target: { value: "new@example.com" } });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "short" } });
    fireEvent.click(screen.getByRole("button", { name: "Create account" }));
    await screen.findByText("Use at least 10 characters", undefined, { timeout: 10_000 });
    await waitFor(() => expect(said()).toBe(1));
    expect(sent).toEqual([]);
  }, 30_000);
});
