import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BillingDeps } from "../../server/domains/billing/service.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";
import { openInvoiceOf, untaxedBilling } from "../support/billing.ts";

const ctx = useTestApp({ NODEPLANE_BILLING_CLOCK_MS: "3600000" });
let db: Db;
let billing: BillingDeps;

beforeAll(() => {
  db = openDatabase(ctx.app.database.url, 2);
  billing = untaxedBilling(db, ctx.app.services.events);
});
afterAll(async () => {
  await db?.$client.end();
});

interface TaxId {
  id: string;
  type: string;
  value: string;
  country: string;
}

const create = (client: GqlClient, input: Record<string, unknown>) =>
  client.gql<{ createTaxId: TaxId }>(
    "mutation($input: CreateTaxIdInput!) { createTaxId(input: $input) { id type value country } }",
    { input },
  );

const update = (client: GqlClient, id: string, input: Record<string, unknown>) =>
  client.gql<{ updateTaxId: TaxId }>(
    "mutation($id: ID!, $input: UpdateTaxIdInput!) { updateTaxId(id: $id, input: $input) { id type value country } }",
    { id, input },
  );

const taxIdsOf = async (client: GqlClient) =>
  (await client.gqlOk<{ taxIds: TaxId[] }>("{ taxIds { id type value country } }")).taxIds;

const fieldsOf = (r: { errors?: { extensions?: Record<string, unknown> }[] }) => ({
  code: r.errors?.[0]?.extensions?.code,
  fields: r.errors?.[0]?.extensions?.fields,
});

describe("tax ids", () => {
  it("are checked per type and country, kept normalised, and listed oldest first", async () => {
    const user = await signUp(ctx.app);
    const made = [
      await create(user.client, { type: "eu_vat", value: "de 123 456 789" }),
      await create(user.client, { type: "gb_vat", value: "GB 123 4567 89" }),
      await create(user.client, { type: "us_ein", value: "12-3456789" }),
      await create(user.client, { type: "au_abn", value: "51 824 753 556", country: "au" }),
    ];
    for (const r of made) expect(r.errors).toBeUndefined();
    expect((await taxIdsOf(user.client)).map(({ type, value, country }) => ({ type, value, country }))).toEqual([
      { type: "eu_vat", value: "DE123456789", country: "DE" },
      { type: "gb_vat", value: "GB123456789", country: "GB" },
      { type: "us_ein", value: "12-3456789", country: "US" },
      { type: "au_abn", value: "51824753556", country: "AU" },
    ]);
    const types = await user.client.gqlOk<{ taxIdTypes: { type: string; countries: { country: string }[] }[] }>(
      "{ taxIdTypes { type countries { country format example } } }",
    );
    expect(types.taxIdTypes.find((t) => t.type === "eu_vat")?.countries).toHaveLength(27);
  });

  it("refuses a number that does not fit naming the field, and writes nothing", async () => {
    const user = await signUp(ctx.app);
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ type: "eu_vt", value: "DE123456789" }, "/type", /No tax id type is called eu_vt/],
      [{ type: "eu_vat", value: "DE12345678" }, "/value", /DE and 9 digits, like DE123456789/],
      [{ type: "eu_vat", value: "DE123456789", country: "FR" }, "/value", /of FR is FR, 2 letters or digits/],
      [{ type: "us_ein", value: "12-3456789", country: "CA" }, "/country", /is for US, not CA/],
      [{ type: "au_abn", value: "51824753557" }, "/value", /wrong check digits/],
      [{ type: "eu_vat", value: "123456789" }, "/value", /Name the country/],
    ];
    for (const [input, pointer, message] of cases) {
      expect(fieldsOf(await create(user.client, input)), JSON.stringify(input)).toEqual({
        code: "BAD_USER_INPUT",
        fields: [{ pointer, message: expect.stringMatching(message) }],
      });
    }
    // The entity schema refuses a country that is not two letters before the rules are read.
    expect(fieldsOf(await create(user.client, { type: "eu_vat", value: "DE123456789", country: "DEU" }))).toMatchObject(
      {
        code: "BAD_USER_INPUT",
        fields: [{ pointer: "/country" }],
      },
    );
    expect(await taxIdsOf(user.client)).toEqual([]);
    await create(user.client, { type: "eu_vat", value: "DE123456789" });
    expect(fieldsOf(await create(user.client, { type: "eu_vat", value: "DE 123-456-789" })).code).toBe("CONFLICT");
    expect(await taxIdsOf(user.client)).toHaveLength(1);
  });

  it("a change is checked whole; a refused one leaves the tax id as it was", async () => {
    const user = await signUp(ctx.app);
    const { createTaxId } = await user.client.gqlOk<{ createTaxId: TaxId }>(
      'mutation { createTaxId(input: { type: "eu_vat", value: "DE123456789" }) { id type value country } }',
    );
    const moved = await update(user.client, createTaxId.id, { value: "FR AB 123456789" });
    expect(moved.data?.updateTaxId).toMatchObject({ value: "FRAB123456789", country: "FR" });
    expect(fieldsOf(await update(user.client, createTaxId.id, { country: "DE" }))).toMatchObject({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/value" }],
    });
    expect(fieldsOf(await update(user.client, createTaxId.id, { type: "us_ein" }))).toMatchObject({
      fields: [{ pointer: "/value", message: expect.stringMatching(/like 12-3456789/) }],
    });
    const retyped = await update(user.client, createTaxId.id, { type: "gb_vat", value: "GB123456789" });
    expect(retyped.data?.updateTaxId).toMatchObject({ type: "gb_vat", country: "GB" });
    const { deleteTaxId } = await user.client.gqlOk<{ deleteTaxId: TaxId }>(
      "mutation($id: ID!) { deleteTaxId(id: $id) { id } }",
      { id: createTaxId.id },
    );
    expect(deleteTaxId.id).toBe(createTaxId.id);
    expect(await taxIdsOf(user.client)).toEqual([]);
  });

  it("another account sees none and changes none", async () => {
    const owner = await signUp(ctx.app);
    const { createTaxId } = await owner.client.gqlOk<{ createTaxId: TaxId }>(
      'mutation { createTaxId(input: { type: "eu_vat", value: "DE123456789" }) { id type value country } }',
    );
    const stranger = await signUp(ctx.app);
    expect(await taxIdsOf(stranger.client)).toEqual([]);
    expect(fieldsOf(await update(stranger.client, createTaxId.id, { value: "DE999999999" })).code).toBe("NOT_FOUND");
    const del = await stranger.client.gql("mutation($id: ID!) { deleteTaxId(id: $id) { id } }", { id: createTaxId.id });
    expect(del.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect(await taxIdsOf(owner.client)).toEqual([createTaxId]);
  });
});

const CUSTOMER =
  "id name phone address { line1 line2 city state postalCode country } metadata { businessType } taxIds { value } defaultPaymentMethod { label }";

describe("billing data", () => {
  it("sets what is given, keeps the rest, and an address is set or cleared as a whole", async () => {
    const user = await signUp(ctx.app);
    const first = await user.client.gqlOk<{ updateBillingData: Record<string, unknown> }>(
      `mutation($input: BillingDataInput!) { updateBillingData(input: $input) { ${CUSTOMER} } }`,
      {
        input: {
          name: "Acme Nodes GmbH",
          businessType: "COMPANY",
          address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "de" },
        },
      },
    );
    expect(first.updateBillingData).toEqual({
      id: user.viewer.id,
      name: "Acme Nodes GmbH",
      phone: null,
      address: { line1: "Hauptstraße 1", line2: null, city: "Berlin", state: null, postalCode: "10115", country: "DE" },
      metadata: { businessType: "COMPANY" },
      taxIds: [],
      defaultPaymentMethod: null,
    });
    await user.client.gqlOk('mutation { updateBillingData(input: { phone: "+49 30 1234567" }) { id } }');
    const { billingCustomer } = await user.client.gqlOk<{ billingCustomer: Record<string, unknown> }>(
      `{ billingCustomer { ${CUSTOMER} } }`,
    );
    expect(billingCustomer).toMatchObject({
      name: "Acme Nodes GmbH",
      phone: "+49 30 1234567",
      metadata: { businessType: "COMPANY" },
    });
    const bad = await user.client.gql(
      'mutation { updateBillingData(input: { name: "Changed", address: { line1: "x", city: "y", country: "Germany" } }) { id } }',
    );
    expect(fieldsOf(bad)).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/address/country" }] });
    const wrongType = await user.client.gql(
      'mutation { updateBillingData(input: { businessType: "CHARITY" }) { id } }',
    );
    expect(wrongType.errors).toBeDefined();
    const cleared = await user.client.gqlOk<{ updateBillingData: { name: string; address: unknown } }>(
      "mutation { updateBillingData(input: { address: null }) { name address { line1 } } }",
    );
    expect(cleared.updateBillingData).toEqual({ name: "Acme Nodes GmbH", address: null });
  });

  it("an invoice's PDF shows who is billed: the name, the address and the tax ids", async () => {
    const user = await signUp(ctx.app);
    await user.client.gqlOk(
      'mutation { updateBillingData(input: { name: "Acme Nodes GmbH", address: { line1: "Hauptstrasse 1", city: "Berlin", postalCode: "10115", country: "DE" } }) { id } }',
    );
    await create(user.client, { type: "eu_vat", value: "DE123456789" });
    await create(user.client, { type: "us_ein", value: "12-3456789" });
    const invoiceId = await openInvoiceOf(db, billing, user);
    const response = await user.client.request(`/billing/invoices/${invoiceId}/pdf`);
    expect(response.status).toBe(200);
    const text = execFileSync("pdftotext", ["-layout", "-", "-"], {
      input: Buffer.from(await response.arrayBuffer()),
    }).toString("utf8");
    expect(text).toContain("Acme Nodes GmbH");
    expect(text).toContain("Hauptstrasse 1");
    expect(text).toContain("10115 Berlin");
    expect(text).toContain("eu_vat DE123456789");
    expect(text).toContain("us_ein 12-3456789");
  });
});
