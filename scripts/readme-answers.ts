/**
 * The README's "Real answers" block: the calls it shows, and how an answer is abridged there. `npm run
 * openapi:examples` writes the block from a fresh start of the default data set; test/http/readme-calls.test.ts
 * runs every call the README shows and checks the status and shape it prints.
 */

/**
 * The calls whose answers the README prints; `anonymous` ones are made without a key, as its curl lines make them;
 * `show`: the members of an answer's `data` (or of each item) printed, where the first few would not say much.
 */
export const README_CALLS: { url: string; anonymous?: true; show?: string[] }[] = [
  { url: '/v1/search/rentals?areas=300&amenities=DOORMAN&noFee=true&sort=PRICE&sortDir=ASC&perPage=2', anonymous: true },
  { url: '/v1/property/8000000', show: ['id', 'address', 'price', 'bedroomCount', 'sqft', 'daysOnMarket', 'transitScore', 'priceHistory'] },
  { url: '/v1/building/2-e-55th-st-manhattan', show: ['id', 'name', 'yearBuilt', 'unitCount', 'floorCount', 'nycData', 'saleInventory'] },
  { url: '/v1/market?kind=rental&areas=200&bedrooms=1' },
  { url: '/v1/property/1545/comparables?limit=2' },
  { url: '/v1/recorded-sales?areas=williamsburg&from=2023-06-01&noConsideration=false&perPage=2' },
  { url: '/v1/areas?level=0' },
];

/** The lines around the generated block in README.md. */
export const README_MARKERS = ['<!-- real answers: written by npm run openapi:examples -->', '<!-- end of real answers -->'] as const;

/** The member that stands for what an abridged object or list leaves out. */
export const LEFT_OUT = '…';

/** Fields of an object shown before the rest is left out (the envelope and its `meta` are shown whole). */
const FIELDS_SHOWN = 8;

/**
 * Cuts an answer for the README: a list to its first item; an object inside `data` to the members `show` names
 * (at the top of `data` or of its items), else to its first fields; `meta` whole.
 */
function cut(value: unknown, show: string[] | undefined, top: boolean): unknown {
  if (Array.isArray(value)) {
    const first = value.slice(0, 1).map((v) => cut(v, show, top));
    return value.length > 1 ? [...first, `${LEFT_OUT} ${value.length - 1} more`] : first;
  }
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const shown = top && show ? entries.filter(([k]) => show.includes(k)) : entries.slice(0, FIELDS_SHOWN);
  const out: Record<string, unknown> = Object.fromEntries(shown.map(([k, v]) => [k, cut(v, show, false)]));
  if (shown.length < entries.length) out[LEFT_OUT] = `${entries.length - shown.length} more`;
  return out;
}

/** An answer `{data, meta}` abridged for the README ({@link cut}): valid JSON, wrapped at commas to lines of about 120 characters at most. */
export function abridge(body: { data: unknown; meta?: unknown }, show?: string[]): string {
  const text = JSON.stringify({ data: cut(body.data, show, true), meta: body.meta });
  const lines: string[] = [];
  let line = '';
  for (const part of text.split(/(?<=,)(?=")/)) {
    if (line && line.length + part.length > 118) {
      lines.push(line);
      line = ' ';
    }
    line += part;
  }
  return [...lines, line].join('\n');
}
