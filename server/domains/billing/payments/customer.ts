import type { Db } from "../../../platform/db/index.ts";
import { conflict, foundOr, notFound } from "../../../platform/errors.ts";
import type { DomainEvents } from "../../../platform/events.ts";
import { isUuid } from "../../../platform/ids.ts";
import * as store from "./store.ts";
import { checkTaxId } from "./tax-ids.ts";

/**
 * The billing customer: who is billed (name, phone, address, business type, set by updateBillingData)
 * and their tax ids (checked by tax-ids.ts), printed on every invoice.
 */

export interface BillingAddress {
  line1: string;
  line2?: string | null;
  city: string;
  state?: string | null;
  postalCode?: string | null;
  country: string;
}

export interface BillingDataInput {
  name?: string | null;
  phone?: string | null;
  address?: BillingAddress | null;
  businessType?: string | null;
}

const blankToNull = (text: string | null | undefined) => (text?.trim() ? text.trim() : null);

/** What is given is set (an address as a whole; null clears it); what is not given stays. */
export async function updateBillingData(db: Db, events: DomainEvents, accountId: string, input: BillingDataInput) {
  const set: Parameters<typeof store.putCustomer>[2] = {};
  if (input.name !== undefined) set.name = blankToNull(input.name);
  if (input.phone !== undefined) set.phone = blankToNull(input.phone);
  if (input.businessType !== undefined) set.businessType = input.businessType;
  if (input.address !== undefined) {
    const a = input.address;
    Object.assign(set, {
      line1: blankToNull(a?.line1),
      line2: blankToNull(a?.line2),
      city: blankToNull(a?.city),
      state: blankToNull(a?.state),
      postalCode: blankToNull(a?.postalCode),
      country: a ? a.country.toUpperCase() : null,
    });
  }
  await store.putCustomer(db, accountId, set);
  await events.emitAndWait("viewer.changed", { accountId, userId: null });
  return customerOf(db, accountId);
}

/** The account's billing customer, with its defaults before anything was set. */
export async function customerOf(db: Db, accountId: string) {
  const row = await store.getCustomer(db, accountId);
  return {
    accountId,
    name: row?.name ?? null,
    phone: row?.phone ?? null,
    address: row?.line1
      ? {
          line1: row.line1,
          line2: row.line2,
          city: row.city ?? "",
          state: row.state,
          postalCode: row.postalCode,
          country: row.country ?? "",
        }
      : null,
    businessType: row?.businessType ?? null,
    stripeCustomerId: row?.stripeCustomerId ?? null,
  };
}
export type BillingCustomer = Awaited<ReturnType<typeof customerOf>>;

/** An address as printed: street lines, then the city line, then the country. */
export function addressLines(address: BillingCustomer["address"]): string[] {
  if (!address) return [];
  const city = [address.postalCode, address.city, address.state].filter(Boolean).join(" ");
  return [address.line1, address.line2, city, address.country].filter((l): l is string => Boolean(l));
}

export const taxIdsOf = (db: Db, accountId: string) => store.listTaxIds(db, accountId);

const taxIdOr404 = async (db: Db, accountId: string, id: string) =>
  foundOr(isUuid(id) ? await store.getTaxId(db, accountId, id) : undefined, "The tax id");

const duplicate = () => conflict("This tax id is on the account already.");

export async function createTaxId(
  db: Db,
  accountId: string,
  input: { type: string; value: string; country?: string | null },
) {
  const checked = checkTaxId(input);
  const made = await store.insertTaxId(db, accountId, checked);
  if (!made) throw duplicate();
  return made;
}

/** A change is checked whole: the tax id as it would be after it. */
export async function updateTaxId(
  db: Db,
  accountId: string,
  id: string,
  input: { type?: string | null; value?: string | null; country?: string | null },
) {
  const current = await taxIdOr404(db, accountId, id);
  const typeChanges = input.type != null && input.type !== current.type;
  const checked = checkTaxId({
    type: input.type ?? current.type,
    value: input.value ?? current.value,
    // A new type or value is read for its own country unless one is named.
    country: input.country ?? (typeChanges || input.value != null ? null : current.country),
  });
  const updated = await store.updateTaxIdRow(db, accountId, id, checked);
  if (!updated) throw duplicate();
  return updated;
}

export async function deleteTaxId(db: Db, accountId: string, id: string) {
  const deleted = isUuid(id) ? await store.deleteTaxIdRow(db, accountId, id) : undefined;
  if (!deleted) throw notFound("The tax id");
  return deleted;
}
