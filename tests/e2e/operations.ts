// GraphQL from a page, with the page's session: a screen's named operation, typed by the generated
// `Operations` and sent as the console sends it, for what a journey needs but does not test.
import type { Page } from "playwright-core";
import { type OperationName, operationDocument, type ResultOf, type VariablesArg } from "../support/operations.ts";

/** Runs a screen's named operation from the page; fails the test on an error. */
export async function runOperation<N extends OperationName>(
  page: Page,
  name: N,
  ...[variables]: VariablesArg<N>
): Promise<ResultOf<N>> {
  const query = await operationDocument(name);
  const answer = await page.evaluate(
    async ({ query, variables }) => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
    },
    { query, variables: variables ?? {} },
  );
  if (answer.errors?.length) throw new Error(`${name}: ${JSON.stringify(answer.errors)}`);
  return answer.data as ResultOf<N>;
}
