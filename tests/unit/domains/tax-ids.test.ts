import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkTaxId, normalizedTaxId, taxIdTypes } from "../../../server/domains/billing/payments/tax-ids.ts";
import { AppError } from "../../../server/platform/errors.ts";

const examples = taxIdTypes().flatMap((rule) => rule.countries.map((c) => ({ rule, c })));

/** The error a check throws, or null when it passes. */
function refusal(input: Parameters<typeof checkTaxId>[0]) {
  try {
    checkTaxId(input);
    return null;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return error;
  }
}

describe("tax ids checked per type and country", () => {
  it("takes every example of the table, kept as it was given", () => {
    for (const { rule, c } of examples) {
      expect(
        checkTaxId({ type: rule.type, value: c.example, country: c.country }),
        `${rule.type} ${c.country}`,
      ).toEqual({
        type: rule.type,
        value: c.example,
        country: c.country,
      });
    }
  });

  it("reads the country of an EU VAT number from its prefix (Greece's is EL)", () => {
    expect(checkTaxId({ type: "eu_vat", value: "el 123 456 789" })).toEqual({
      type: "eu_vat",
      value: "EL123456789",
      country: "GR",
    });
    expect(checkTaxId({ type: "eu_vat", value: "DE-123.456.789" }).country).toBe("DE");
  });

  it("is the same number in lower case and with the separators the type strips", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...examples.filter(({ rule }) => rule.strip.length > 0)),
        fc.array(fc.nat(), { maxLength: 4 }),
        ({ rule, c }, at) => {
          let value = c.example.toLowerCase();
          for (const n of at) {
            const i = n % (value.length + 1);
            value = `${value.slice(0, i)}${rule.strip[n % rule.strip.length]}${value.slice(i)}`;
          }
          expect(checkTaxId({ type: rule.type, value, country: c.country }).value).toBe(c.example);
        },
      ),
    );
  });

  it("answers a kept value or a refusal naming /type, /country or /value, for anything", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...taxIdTypes().map((t) => t.type), "xx_vat"),
        fc.string({ maxLength: 30 }),
        fc.option(fc.constantFrom("DE", "FR", "GB", "US", "AU", "ZZ"), { nil: undefined }),
        (type, value, country) => {
          const error = refusal({ type, value, country });
          if (error === null) {
            const kept = checkTaxId({ type, value, country });
            const rule = taxIdTypes().find((t) => t.type === type);
            const where = rule?.countries.find((c) => c.country === kept.country);
            expect(where && new RegExp(where.pattern).test(kept.value)).toBe(true);
            // What is kept is kept again unchanged.
            expect(checkTaxId({ type, value: kept.value, country: kept.country })).toEqual(kept);
          } else {
            expect(error.code).toBe("BAD_USER_INPUT");
            expect(error.fields).toHaveLength(1);
            expect(["/type", "/country", "/value"]).toContain(error.fields[0].pointer);
          }
        },
      ),
    );
  });

  it("an ABN or a Belgian VAT number with one digit changed fails its check digits", () => {
    const cases = [
      { type: "au_abn", value: "51824753556", from: 0 },
      { type: "eu_vat", value: "BE0477472701", from: 3 },
    ];
    fc.assert(
      fc.property(fc.constantFrom(...cases), fc.nat(), fc.integer({ min: 1, max: 9 }), (c, at, delta) => {
        const i = c.from + (at % (c.value.length - c.from));
        const changed = `${c.value.slice(0, i)}${(Number(c.value[i]) + delta) % 10}${c.value.slice(i + 1)}`;
        const error = refusal({ type: c.type, value: changed });
        expect(error?.fields[0]?.pointer).toBe("/value");
      }),
    );
  });

  it("says what was expected, naming the field", () => {
    expect(refusal({ type: "eu_vt", value: "DE123456789" })?.fields[0]).toEqual({
      pointer: "/type",
      message: expect.stringMatching(/^No tax id type is called eu_vt: use one of eu_vat, gb_vat, us_ein, au_abn/),
    });
    expect(refusal({ type: "eu_vat", value: "DE12345678" })?.fields[0]).toEqual({
      pointer: "/value",
      message: "A European VAT number of DE is DE and 9 digits, like DE123456789.",
    });
    expect(refusal({ type: "eu_vat", value: "DE123456789", country: "FR" })?.fields[0]?.pointer).toBe("/value");
    expect(refusal({ type: "eu_vat", value: "US123456789", country: "US" })?.fields[0]?.pointer).toBe("/country");
    expect(refusal({ type: "eu_vat", value: "123456789" })?.fields[0]).toEqual({
      pointer: "/value",
      message: expect.stringMatching(/^Name the country: a European VAT number starts with one of AT, BE/),
    });
    expect(refusal({ type: "us_ein", value: "12-3456789", country: "GB" })?.fields[0]?.pointer).toBe("/country");
    expect(refusal({ type: "au_abn", value: "51 824 753 557" })?.fields[0]?.message).toMatch(/wrong check digits/);
  });

  it("keeps the separators a type keeps (an EIN's dash, a Swiss number's dots)", () => {
    const ein = taxIdTypes().find((t) => t.type === "us_ein");
    if (!ein) throw new Error("no us_ein");
    expect(normalizedTaxId(ein, " 12-3456789 ")).toBe("12-3456789");
    expect(checkTaxId({ type: "ch_vat", value: "che-123.456.789 mwst" }).value).toBe("CHE-123.456.789 MWST");
  });
});
