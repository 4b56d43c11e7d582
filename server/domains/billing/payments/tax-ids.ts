import { readCheckedCatalogue } from "../../../platform/catalogue-data.ts";
import { badInput } from "../../../platform/errors.ts";

/**
 * Tax ids checked per type and country, by one table of rules as data (`schemas/catalogue/tax-id-types.json`):
 * the countries a type is for, and the shape of a number in each. Pure: the store writes what this answers.
 */
export interface TaxIdCountryRule {
  country: string;
  pattern: string;
  format: string;
  example: string;
  checksum?: keyof typeof CHECKSUMS;
}

export interface TaxIdTypeRule {
  type: string;
  name: string;
  strip: string;
  countries: TaxIdCountryRule[];
}

/** Checks a pattern cannot express, named by the catalogue. */
const CHECKSUMS = {
  /** The ATO's: 1 off the first digit, weights 10, 1, 3, 5, …, 19, a multiple of 89. */
  au_abn: (value: string) => {
    const weights = [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
    const digits = [...value].map(Number);
    digits[0] -= 1;
    return digits.reduce((sum, d, i) => sum + d * weights[i], 0) % 89 === 0;
  },
  /** Belgium's: the last two digits are 97 less the first eight modulo 97. */
  be_mod97: (value: string) => {
    const digits = value.slice(2);
    return 97 - (Number(digits.slice(0, 8)) % 97) === Number(digits.slice(8));
  },
} as const;

const catalogue = readCheckedCatalogue<{ types: TaxIdTypeRule[] }>("tax-id-types");
const byType: ReadonlyMap<string, TaxIdTypeRule> = new Map(catalogue.types.map((t) => [t.type, t]));

export const taxIdTypes = (): readonly TaxIdTypeRule[] => catalogue.types;

/** The value as it is kept: upper case, without the type's separators. */
export function normalizedTaxId(rule: TaxIdTypeRule, value: string): string {
  const stripped = [...value.trim().toUpperCase()].filter((ch) => !rule.strip.includes(ch)).join("");
  return stripped.replace(/\s+/g, " ");
}

const patternOf = (() => {
  const compiled = new Map<string, RegExp>();
  return (pattern: string) => {
    let re = compiled.get(pattern);
    if (!re) {
      re = new RegExp(pattern);
      compiled.set(pattern, re);
    }
    return re;
  };
})();

/**
 * A tax id checked: its type known, its country one of the type's (given, or read from an EU VAT
 * number's prefix), its value of that country's shape and checksum. Anything else is BAD_USER_INPUT
 * naming `/type`, `/country` or `/value` with what was expected.
 */
export function checkTaxId(input: { type: string; value: string; country?: string | null }): {
  type: string;
  value: string;
  country: string;
} {
  const rule = byType.get(input.type);
  if (!rule) {
    throw badInput([
      {
        pointer: "/type",
        message: `No tax id type is called ${input.type}: use one of ${catalogue.types.map((t) => t.type).join(", ")}.`,
      },
    ]);
  }
  const value = normalizedTaxId(rule, input.value);
  const country = input.country?.trim().toUpperCase() || countryFromValue(rule, value);
  const where = rule.countries.find((c) => c.country === country);
  if (!where) {
    throw badInput([
      {
        pointer: input.country ? "/country" : "/value",
        message: input.country
          ? `A ${rule.name} is for ${rule.countries.map((c) => c.country).join(", ")}, not ${country}.`
          : `Name the country: a ${rule.name} starts with one of ${rule.countries.map((c) => prefixOf(c)).join(", ")}.`,
      },
    ]);
  }
  if (!patternOf(where.pattern).test(value)) {
    throw badInput([
      {
        pointer: "/value",
        message: `A ${rule.name} of ${country} is ${where.format}, like ${where.example}.`,
      },
    ]);
  }
  if (where.checksum && !CHECKSUMS[where.checksum](value)) {
    throw badInput([{ pointer: "/value", message: `This ${rule.name} has wrong check digits.` }]);
  }
  return { type: rule.type, value, country };
}

/** The letters an EU VAT number starts with (Greece's are EL), from the country's example. */
const prefixOf = (c: TaxIdCountryRule) => c.example.slice(0, 2);

function countryFromValue(rule: TaxIdTypeRule, value: string): string {
  if (rule.countries.length === 1) return rule.countries[0].country;
  return rule.countries.find((c) => value.startsWith(prefixOf(c)))?.country ?? "";
}
