// The endpoints list is kept in each process (the list cache). A change through one process shows in
// its own list in the answer to the next request, and in another process's list (two services on one
// database) as soon as PostgreSQL has delivered the events relay's notification: that one is asked again
// for a moment. Each process has the list cached from a request just before the change.
import { describe, expect, it } from "vitest";
import { type GqlClient, signUp, useTwoTestApps } from "../support/api.ts";

const apps = useTwoTestApps();
const { onSecond } = apps;

/** The list as the screen shows it, with a status filter, as text to compare. */
async function listed(client: GqlClient, status: string | null = null): Promise<string> {
  const { endpoints } = await client.gqlOk<{ endpoints: unknown }>(
    `query($status: EndpointStatus) { endpoints(first: 50, status: $status) {
      edges { cursor node { id label status tags { tagId label } } } totalCount } }`,
    { status },
  );
  return JSON.stringify(endpoints);
}

/** How long PostgreSQL may take to deliver a notification to the other process on a loaded machine. */
const DELIVERY_MS = 2000;

/** What `ask` answers once it answers `expected`, or its last answer after DELIVERY_MS. */
async function soon(ask: () => Promise<string>, expected: string): Promise<string> {
  const deadline = Date.now() + DELIVERY_MS;
  let answer = await ask();
  while (answer !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    answer = await ask();
  }
  return answer;
}

describe("the endpoints list after a change", () => {
  it("shows each change at once in the process that made it, and soon in another", async () => {
    const user = await signUp(apps.first);
    const here = user.client;
    const elsewhere = onSecond(user);
    type Node = { id: string; label: string | null; status: string; tags: { tagId: string; label: string }[] };
    const nodes = async (status: string | null = null) =>
      (JSON.parse(await listed(here, status)) as { edges: { node: Node }[] }).edges.map((edge) => edge.node);

    /** Runs a change with both lists cached before it; checks both after it, and returns this process's list. */
    const change = async (mutation: string, variables: Record<string, unknown>, status: string | null = null) => {
      const before = await listed(here, status);
      expect(await listed(elsewhere, status)).toBe(before);
      await here.gqlOk(mutation, variables);
      const after = await listed(here, status);
      expect(after).not.toBe(before);
      expect(await soon(() => listed(elsewhere, status), after)).toBe(after);
      return nodes(status);
    };

    const { createEndpoint } = await here.gqlOk<{ createEndpoint: { id: string } }>(
      'mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia", label: "one" }) { id } }',
    );
    const id = createEndpoint.id;
    let list = await change("mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }", {
      input: { chain: "ethereum", network: "ethereum-sepolia", label: "two" },
    });
    expect(list.map((e) => e.label)).toEqual(["two", "one"]);

    list = await change('mutation($id: ID!) { updateEndpointLabel(id: $id, label: "first") { id } }', { id });
    expect(list.find((e) => e.id === id)?.label).toBe("first");

    list = await change('mutation($id: ID!) { addEndpointTag(endpointId: $id, label: "prod") { id } }', { id });
    const [tag] = list.find((e) => e.id === id)?.tags ?? [];
    expect(tag?.label).toBe("prod");

    list = await change("mutation($id: ID!, $t: ID!) { removeEndpointTag(endpointId: $id, tagId: $t) { id } }", {
      id,
      t: tag.tagId,
    });
    expect(list.find((e) => e.id === id)?.tags).toEqual([]);

    await here.gqlOk('mutation($id: ID!) { addEndpointTag(endpointId: $id, label: "staging") { id } }', { id });
    const [staging] = (await nodes()).find((e) => e.id === id)?.tags ?? [];
    list = await change("mutation($t: ID!) { deleteTag(tagId: $t) { success } }", { t: staging.tagId });
    expect(list.find((e) => e.id === id)?.tags).toEqual([]);

    list = await change("mutation($id: ID!) { toggleEndpointPaused(id: $id) { id } }", { id });
    expect(list.find((e) => e.id === id)?.status).toBe("PAUSED");

    list = await change("mutation($id: ID!) { archiveEndpoint(id: $id) { id } }", { id }, "ARCHIVED");
    expect(list.map((e) => e.id)).toEqual([id]);
    const live = await listed(here);
    expect(live).not.toContain(id);
    expect(await soon(() => listed(elsewhere), live)).toBe(live);
  });
});
