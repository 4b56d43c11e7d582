import type { InvoiceLineRow, InvoiceRow } from "./store.ts";

/** Cents as dollars with two decimals and a minus sign for a credit: the one money format of the PDF. */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100).toLocaleString("en-US")}.${String(abs % 100).padStart(2, "0")}`;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * An invoice as a PDF (A4, the standard Helvetica fonts, no images): who and when, one row per line as
 * stored, and the total, which is the invoice's (the sum of its lines, written once by the period's close).
 */
export async function invoicePdf(
  invoice: InvoiceRow,
  lines: InvoiceLineRow[],
  billedTo: {
    company: string | null;
    email: string;
    /** The billing customer's address, one line per entry (payments/customer.ts). */
    address?: string[];
    /** Tax ids as printed: "eu_vat DE123456789". */
    taxIds?: string[];
  },
): Promise<Buffer> {
  // Loaded with the first invoice asked for: pdfkit and its font engine took ~0.3 s of every start's CPU.
  const { default: PDFDocument } = await import("pdfkit");
  const doc = new PDFDocument({
    size: "A4",
    margin: 56,
    info: { Title: `Invoice ${invoice.number}`, Author: "Nodeplane" },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  const left = 56;
  const right = doc.page.width - 56;
  const amountX = right - 120;

  doc.font("Helvetica-Bold").fontSize(20).text("Nodeplane", left, 56);
  doc.font("Helvetica").fontSize(10).fillColor("#555").text("Blockchain node infrastructure", left, 80);
  doc.fillColor("#000").font("Helvetica-Bold").fontSize(16).text(`Invoice ${invoice.number}`, left, 120);
  doc.font("Helvetica").fontSize(10);
  const facts: [string, string][] = [
    ["Billed to", billedTo.company ? `${billedTo.company} (${billedTo.email})` : billedTo.email],
    ...(billedTo.address?.length ? [["Address", billedTo.address.join("\n")] as [string, string]] : []),
    ...(billedTo.taxIds?.length ? [["Tax ids", billedTo.taxIds.join("\n")] as [string, string]] : []),
    ["Period", `${day(invoice.periodStart)} to ${day(invoice.periodEnd)}`],
    ["Issued", day(invoice.createdAt)],
    ["Plan", invoice.planName],
    ["Status", invoice.status],
  ];
  let y = 150;
  for (const [label, value] of facts) {
    doc.fillColor("#555").text(label, left, y, { width: 90 });
    doc.fillColor("#000").text(value, left + 100, y, { width: right - left - 100 });
    y += Math.max(16, doc.heightOfString(value, { width: right - left - 100 }) + 4);
  }

  y += 20;
  doc.font("Helvetica-Bold").text("Description", left, y).text("Amount", amountX, y, { width: 120, align: "right" });
  y += 16;
  doc.moveTo(left, y).lineTo(right, y).strokeColor("#999").stroke();
  y += 8;
  doc.font("Helvetica");
  for (const line of lines) {
    const height = doc.heightOfString(line.description, { width: amountX - left - 12 });
    if (y + height > doc.page.height - 120) {
      doc.addPage();
      y = 56;
    }
    doc.text(line.description, left, y, { width: amountX - left - 12 });
    doc.text(formatCents(line.amountCents), amountX, y, { width: 120, align: "right" });
    y += Math.max(height, 12) + 6;
  }
  doc.moveTo(left, y).lineTo(right, y).strokeColor("#999").stroke();
  y += 10;
  doc.font("Helvetica-Bold").fontSize(12);
  doc.text(`Total (${invoice.currency.toUpperCase()})`, left, y);
  doc.text(formatCents(invoice.totalCents), amountX, y, { width: 120, align: "right" });
  y += 20;
  doc.font("Helvetica").fontSize(10);
  doc
    .text("Amount due", left, y)
    .text(formatCents(invoice.amountRemainingCents), amountX, y, { width: 120, align: "right" });
  doc.end();
  return done;
}
