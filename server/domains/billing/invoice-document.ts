// An invoice's PDF as its account's member downloads it: the console's route (plugin.ts, by session) and
// the REST API's (`/billing/invoices/{id}/pdf`, by key) both answer this.
import type { Db } from "../../platform/db/index.ts";
import { getAccountOrFail, listMembers } from "../account/service.ts";
import { addressLines, customerOf, taxIdsOf } from "./payments/customer.ts";
import { invoicePdf } from "./pdf.ts";
import { invoiceWithLines } from "./service.ts";

export interface InvoiceDocument {
  filename: string;
  body: Buffer;
}

/** The invoice's PDF; NOT_FOUND for another account's invoice, as for one that does not exist. */
export async function invoiceDocument(db: Db, accountId: string, invoiceId: string): Promise<InvoiceDocument> {
  const found = await invoiceWithLines(db, accountId, invoiceId);
  const account = await getAccountOrFail(db, accountId);
  const owner = (await listMembers(db, accountId)).find((m) => m.role === "OWNER");
  const customer = await customerOf(db, accountId);
  const body = await invoicePdf(found.invoice, found.lines, {
    company: customer.name ?? account.companyName,
    email: owner?.user.email ?? "",
    address: addressLines(customer.address),
    taxIds: (await taxIdsOf(db, accountId)).map((t) => `${t.type} ${t.value}`),
  });
  return { filename: `${found.invoice.number}.pdf`, body };
}
