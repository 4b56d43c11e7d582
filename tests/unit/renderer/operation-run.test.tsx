// @vitest-environment jsdom
// The one path actions, form views, runner views and bulk actions take to run an operation: the
// service's field errors land beside the form fields the variables fed, the rest above the form.
import { act, cleanup, renderHook } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DataProvider, GqlError, type Transport } from "../../../renderer/index.ts";
import type { JsonSchema } from "../../../renderer/types.ts";
import { errorMessage, formErrors, useOperationRun } from "../../../renderer/useOperationRun.ts";
import { installDomStandIns, registryFor, viewerFor } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const registry = { ...registryFor("owner"), operations: { Save: "mutation Save($input: X) { save }" } };
const schema: JsonSchema = {
  type: "object",
  properties: { label: { type: "string" }, limits: { type: "object", properties: { rps: { type: "integer" } } } },
};

function hookWith(transport: Transport) {
  const wrapper = ({ children }: { children: ReactNode }) => (
    <DataProvider transport={transport} registry={registry} viewer={viewerFor("OWNER")}>
      {children}
    </DataProvider>
  );
  return renderHook(() => useOperationRun(), { wrapper });
}

const badInput = (fields: { pointer: string; message: string }[]) =>
  new GqlError("Some fields are not valid.", "BAD_USER_INPUT", fields);

describe("formErrors", () => {
  it("puts each field error on the form field its variable came from, and the others above the form", () => {
    const error = badInput([
      { pointer: "/label", message: "Too long" },
      { pointer: "/limits/rps", message: "Must be positive" },
      { pointer: "/unknown", message: "Not allowed here" },
    ]);
    expect(formErrors(error, { input: "$form" }, schema)).toEqual({
      extraErrors: { label: { __errors: ["Too long"] }, limits: { rps: { __errors: ["Must be positive"] } } },
      formError: "Not allowed here",
    });
  });

  it("follows a `$form.x` argument back to its field", () => {
    const error = badInput([{ pointer: "/name", message: "Taken" }]);
    expect(formErrors(error, { name: "$form.label", id: "$route.id" }, schema)).toEqual({
      extraErrors: { label: { __errors: ["Taken"] } },
      formError: null,
    });
  });

  it("without a form, or without field errors, the whole error is the message", () => {
    expect(formErrors(badInput([{ pointer: "/label", message: "Too long" }]), undefined, undefined)).toEqual({
      extraErrors: undefined,
      formError: "Some fields are not valid.",
    });
    expect(formErrors(new GqlError("no", "FORBIDDEN"), { input: "$form" }, schema).formError).toBe(
      "You do not have permission to do this.",
    );
    expect(errorMessage(new Error("plain"))).toBe("plain");
  });
});

describe("useOperationRun", () => {
  it("runs the operation with variables resolved from the scope and reports success after onSuccess", async () => {
    const calls: Record<string, unknown>[] = [];
    const seen: unknown[] = [];
    const { result } = hookWith(async (_document, variables) => {
      calls.push(variables ?? {});
      return { save: "ok" };
    });
    let outcome: Awaited<ReturnType<typeof result.current.run>> | undefined;
    await act(async () => {
      outcome = await result.current.run({
        operation: "Save",
        variables: { input: "$form" },
        scope: { form: { label: "a" } },
        schema,
        onSuccess: (data) => {
          seen.push(data);
        },
      });
    });
    expect(calls).toEqual([{ input: { label: "a" } }]);
    expect(outcome).toEqual({ ok: true, data: { save: "ok" } });
    expect(seen).toEqual([{ save: "ok" }]);
    expect(result.current.errors).toEqual({ extraErrors: undefined, formError: null });
    expect(result.current.running).toBe(false);
  });

  it("keeps the mapped errors of a failed run for the form, and clears them when the next run starts", async () => {
    let fail = true;
    const { result } = hookWith(async () => {
      if (fail) throw badInput([{ pointer: "/label", message: "Too long" }]);
      return { save: "ok" };
    });
    await act(async () => {
      const outcome = await result.current.run({
        operation: "Save",
        variables: undefined,
        scope: { form: {} },
        schema,
      });
      expect(outcome.ok).toBe(false);
    });
    expect(result.current.errors).toEqual({ extraErrors: { label: { __errors: ["Too long"] } }, formError: null });
    fail = false;
    await act(async () => {
      await result.current.run({ operation: "Save", variables: undefined, scope: { form: {} }, schema });
    });
    expect(result.current.errors).toEqual({ extraErrors: undefined, formError: null });
  });

  it("a failure in onSuccess (a refresh, a redirect) is reported like the operation's own", async () => {
    const { result } = hookWith(async () => ({ save: "ok" }));
    await act(async () => {
      const outcome = await result.current.run({
        operation: "Save",
        variables: undefined,
        scope: {},
        onSuccess: () => {
          throw new GqlError("Refresh failed", "INTERNAL");
        },
      });
      expect(outcome).toMatchObject({ ok: false, errors: { formError: "Refresh failed" } });
    });
  });
});
