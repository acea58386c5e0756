/** Mortgage terms for the monthly cost of a sale: rate in percent a year, down payment in percent. */
export interface MortgageTerms {
  ratePercent: number;
  downPaymentPercent: number;
  termYears: number;
}

/**
 * Monthly payment per dollar of asking price on a fixed-rate mortgage: the loan is
 * `price x (1 - down%)`, repaid monthly over `termYears` at `ratePercent / 12` a month.
 * Multiply by the price to get dollars a month.
 */
export function mortgageFactor(terms: MortgageTerms): number {
  const loanShare = 1 - terms.downPaymentPercent / 100;
  const months = terms.termYears * 12;
  const r = terms.ratePercent / 100 / 12;
  if (r === 0) return loanShare / months;
  return (loanShare * r) / (1 - Math.pow(1 + r, -months));
}

/**
 * Total monthly cost of a sale in dollars: mortgage payment + maintenance + common charges + property
 * tax (each a month; an unknown charge counts as 0, as DESIGN.md decides).
 */
export function saleMonthlyCost(
  price: number,
  charges: { monthlyMaintenance: number | null; monthlyCommonCharges: number | null; monthlyTaxes: number | null },
  terms: MortgageTerms,
): number {
  return (
    price * mortgageFactor(terms) +
    (charges.monthlyMaintenance ?? 0) +
    (charges.monthlyCommonCharges ?? 0) +
    (charges.monthlyTaxes ?? 0)
  );
}
