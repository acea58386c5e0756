/** Mortgage terms for the monthly cost of a sale: rate in percent a year, down payment in percent. */
export interface MortgageTerms {
  ratePercent: number;
  downPaymentPercent: number;
  termYears: number;
}

/**
 * Monthly payment per dollar of asking price on a fixed-rate mortgage: the loan is
 * `price x (1 - down%)`, repaid monthly over `termYears` at `ratePercent / 12` a month.
 * Multiply by the price to get dollars a month. A sale's monthly cost is this payment + maintenance +
 * common charges + property tax (unknown charges count as 0, as DESIGN.md decides); the search query
 * evaluates it in SQL as `price x factor + monthly_charges`.
 */
export function mortgageFactor(terms: MortgageTerms): number {
  const loanShare = 1 - terms.downPaymentPercent / 100;
  const months = terms.termYears * 12;
  const r = terms.ratePercent / 100 / 12;
  if (r === 0) return loanShare / months;
  return (loanShare * r) / (1 - (1 + r) ** -months);
}

/**
 * A sale's monthly charges in dollars a month: maintenance + common charges + property tax, an unknown
 * part counting as 0 (DESIGN.md). Never negative: a negative part (no listing has shown one) counts as 0
 * too.
 */
export function monthlyCharges(parts: { maintenance: number | null; commonCharges: number | null; taxes: number | null }): number {
  return Math.max(0, parts.maintenance ?? 0) + Math.max(0, parts.commonCharges ?? 0) + Math.max(0, parts.taxes ?? 0);
}
