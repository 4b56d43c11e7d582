// @vitest-environment jsdom
// Unsaved edits are not lost silently: with a form edited, the browser's Back and Forward (a POP
// navigation of the data router) and a link (a PUSH) are held until the user chooses Stay or Leave;
// a form without edits lets every navigation through.
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { createMemoryRouter } from "react-router";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Manifest } from "../../../renderer/types.ts";
import { fixtureTransport, installDomStandIns, registryFor, renderRoute, viewerFor } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

type Router = ReturnType<typeof createMemoryRouter>;

/** The account page (its profile form), between the endpoints list and the usage page in history. */
async function accountPage(): Promise<{ router: Router; fullName: HTMLInputElement }> {
  let router: Router | undefined;
  render(
    renderRoute("/account", {
      registry: registryFor("owner"),
      viewer: viewerFor("OWNER"),
      history: ["/endpoints"],
      future: ["/usage"],
      onRouter: (created) => {
        router = created;
      },
    }),
  );
  const profile = await screen.findByText("Your profile", {}, { timeout: 10_000 });
  const card = profile.closest("[data-view=form]") as HTMLElement;
  const fullName = await waitFor(() => {
    const input = card.querySelector<HTMLInputElement>("input[id$=userFullName]");
    if (!input) throw new Error("no Full name field yet");
    return input;
  });
  if (!router) throw new Error("no router");
  return { router, fullName };
}

function edit(input: HTMLInputElement, value: string) {
  fireEvent.mouseDown(input);
  fireEvent.change(input, { target: { value } });
}

const path = (router: Router) => router.state.location.pathname;
const question = () => screen.queryByText("You have unsaved changes. Leave this page and lose them?");
/** Whether the router holds a navigation (the dialog stays in the page, hidden, once closed). */
const held = (router: Router) => [...router.state.blockers.values()].some((blocker) => blocker.state === "blocked");

describe("leaving a form with unsaved edits", () => {
  it("Back asks first: Stay keeps the page and the edit, Leave goes back", async () => {
    const { router, fullName } = await accountPage();
    edit(fullName, "Edited name");
    await waitFor(() => expect(fullName.value).toBe("Edited name"));

    await act(() => router.navigate(-1));
    await waitFor(() => expect(held(router)).toBe(true));
    expect(question()).not.toBeNull();
    expect(path(router)).toBe("/account");
    fireEvent.click(screen.getByRole("button", { name: "Stay" }));
    await waitFor(() => expect(held(router)).toBe(false));
    expect(path(router)).toBe("/account");
    expect(fullName.value).toBe("Edited name");

    await act(() => router.navigate(-1));
    await waitFor(() => expect(held(router)).toBe(true));
    expect(question()).not.toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Leave" }));
    await waitFor(() => expect(path(router)).toBe("/endpoints"));
  }, 60_000);

  it("Forward and a link ask too", async () => {
    const { router, fullName } = await accountPage();
    edit(fullName, "Edited name");
    await act(() => router.navigate(1));
    await waitFor(() => expect(held(router)).toBe(true));
    expect(question()).not.toBeNull();
    expect(path(router)).toBe("/account");
    fireEvent.click(screen.getByRole("button", { name: "Stay" }));
    await waitFor(() => expect(held(router)).toBe(false));

    await act(() => router.navigate("/streams"));
    await waitFor(() => expect(held(router)).toBe(true));
    expect(question()).not.toBeNull();
    expect(path(router)).toBe("/account");
    fireEvent.click(screen.getByRole("button", { name: "Leave" }));
    await waitFor(() => expect(path(router)).toBe("/streams"));
  }, 60_000);

  it("a form without edits lets Back through at once", async () => {
    const { router } = await accountPage();
    await act(() => router.navigate(-1));
    await waitFor(() => expect(path(router)).toBe("/endpoints"));
    expect(held(router)).toBe(false);
    expect(question()).toBeNull();
  }, 60_000);

  it("a saved form's redirect goes without asking", async () => {
    // A form that redirects after its save: the profile form, moving on to the endpoints.
    const manifest = {
      version: 1,
      id: "test.savedForm",
      route: "/test-form",
      title: "A form that moves on",
      nav: { hidden: true, parent: "account.profile" },
      requires: { role: "VIEWER" },
      views: [
        {
          kind: "form",
          mutation: "UpdateAccount",
          schema: "account#/$defs/profileInput",
          variables: { input: "$form" },
          role: "VIEWER",
          submit: { label: "Save and go", redirect: "/endpoints" },
        },
      ],
    } as unknown as Manifest;
    const registry = registryFor("owner");
    const recorded = fixtureTransport();
    let router: Router | undefined;
    render(
      renderRoute("/test-form", {
        registry: { ...registry, screens: [...registry.screens, manifest] },
        viewer: viewerFor("OWNER"),
        transport: async (document, variables) =>
          /^# operation UpdateAccount\n/.test(document)
            ? { updateAccount: { id: "a", userFullName: "Saved name" } }
            : recorded(document, variables),
        onRouter: (created) => {
          router = created;
        },
      }),
    );
    const field = await waitFor(
      () => {
        const input = document.querySelector<HTMLInputElement>("input[id$=userFullName]");
        if (!input) throw new Error("no Full name field yet");
        return input;
      },
      { timeout: 20_000 },
    );
    edit(field, "Saved name");
    fireEvent.click(screen.getByRole("button", { name: "Save and go" }));
    if (!router) throw new Error("no router");
    const created = router;
    await waitFor(() => expect(path(created)).toBe("/endpoints"), { timeout: 20_000 });
    expect(held(created)).toBe(false);
  }, 60_000);
});
