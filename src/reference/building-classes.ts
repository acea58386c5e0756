/**
 * Descriptions of NYC Department of Finance building class codes (the DOF "Building Classifications"
 * glossary), for the codes that residential sales in Manhattan carry; other codes fall back to the
 * description of their letter.
 */
const CODES: Record<string, string> = {
  A1: 'One family dwelling, two stories detached',
  A4: 'One family dwelling, city residence',
  A5: 'One family dwelling, attached or semi-detached',
  A7: 'One family dwelling, mansion type or town house',
  A9: 'One family dwelling, miscellaneous',
  B1: 'Two family dwelling, brick',
  B2: 'Two family dwelling, frame',
  B3: 'Two family dwelling, converted from one family',
  B9: 'Two family dwelling, miscellaneous',
  C0: 'Walk-up apartments, three families',
  C1: 'Walk-up apartments, over six families without stores',
  C2: 'Walk-up apartments, five to six families',
  C3: 'Walk-up apartments, four families',
  C4: 'Walk-up apartments, old law tenement',
  C5: 'Walk-up apartments, converted dwelling or rooming house',
  C6: 'Walk-up apartments, cooperative',
  C7: 'Walk-up apartments, over six families with stores',
  C8: 'Walk-up apartments, co-op conversion from loft/warehouse',
  D0: 'Elevator apartments, co-op conversion from loft/warehouse',
  D1: 'Elevator apartments, semi-fireproof without stores',
  D2: 'Elevator apartments, artists in residence',
  D3: 'Elevator apartments, fireproof without stores',
  D4: 'Elevator apartments, cooperative',
  D5: 'Elevator apartments, converted',
  D6: 'Elevator apartments, fireproof with stores',
  D7: 'Elevator apartments, semi-fireproof with stores',
  D8: 'Elevator apartments, luxury type',
  D9: 'Elevator apartments, miscellaneous',
  R1: 'Condominium, residential unit in two to ten unit building',
  R2: 'Condominium, residential unit in walk-up building',
  R3: 'Condominium, residential unit in one to three story building',
  R4: 'Condominium, residential unit in elevator building',
  R5: 'Condominium, miscellaneous commercial',
  R6: 'Condominium, residential unit of one to three unit building',
  R8: 'Condominium, commercial unit of two to ten unit building',
  R9: 'Condominium, co-op within a condominium',
  RR: 'Condominium, rentals',
  S1: 'Residence, multiple use: primarily one family with one store or office',
  S2: 'Residence, multiple use: primarily two family with one store or office',
  S3: 'Residence, multiple use: primarily three family with one store or office',
  S4: 'Residence, multiple use: primarily four family with one store or office',
  S5: 'Residence, multiple use: primarily five to six family with one store or office',
  S9: 'Residence, multiple use: single or multiple dwelling with stores or offices',
};
const LETTERS: Record<string, string> = {
  A: 'One family dwelling',
  B: 'Two family dwelling',
  C: 'Walk-up apartments',
  D: 'Elevator apartments',
  R: 'Condominium',
  S: 'Residence, multiple use',
  K: 'Store building',
  O: 'Office building',
  L: 'Loft building',
  H: 'Hotel',
  M: 'Religious facility',
  W: 'Educational structure',
  V: 'Vacant land',
  G: 'Garage',
  E: 'Warehouse',
  F: 'Factory',
  I: 'Health facility',
  J: 'Theatre',
  N: 'Asylum or home',
  P: 'Place of public assembly',
  Q: 'Outdoor recreation facility',
  T: 'Transportation facility',
  U: 'Utility',
  Y: 'Government installation',
  Z: 'Miscellaneous',
};

/** Description of a building class code such as `D4`; null for an empty code. */
export function buildingClassDescription(code: string | null | undefined): string | null {
  if (!code) return null;
  const c = code.trim().toUpperCase();
  return CODES[c] ?? LETTERS[c[0]] ?? null;
}
