/**
 * Street-address normalisation used to join NYC Department of Finance sales to PLUTO tax lots:
 * text before the first comma, upper case, single spaces, ordinals as bare numbers ("4TH" and
 * "FOURTH" -> "4") and the usual abbreviations spelled out ("ST" -> "STREET", "E" -> "EAST").
 */
const WORDS: Record<string, string> = {
  FIRST: '1', SECOND: '2', THIRD: '3', FOURTH: '4', FIFTH: '5', SIXTH: '6', SEVENTH: '7', EIGHTH: '8', NINTH: '9', TENTH: '10',
  ST: 'STREET', 'ST.': 'STREET', AVE: 'AVENUE', 'AVE.': 'AVENUE', AV: 'AVENUE', E: 'EAST', 'E.': 'EAST', W: 'WEST', 'W.': 'WEST',
  N: 'NORTH', S: 'SOUTH', PL: 'PLACE', BLVD: 'BOULEVARD', RD: 'ROAD', DR: 'DRIVE', PKWY: 'PARKWAY', SQ: 'SQUARE', TER: 'TERRACE',
};

export function normalizeStreet(address: string): string {
  return address
    .split(',')[0]
    .trim()
    .toUpperCase()
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => {
      const w = WORDS[word] ?? word;
      const ordinal = /^(\d+)(ST|ND|RD|TH)$/.exec(w);
      return ordinal ? ordinal[1] : w;
    })
    .join(' ');
}

/** "347 EAST 4 STREET" -> "347 East 4 Street". */
export function titleCase(text: string): string {
  return text.toLowerCase().replace(/(^|[\s-])([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
}
