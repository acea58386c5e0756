import type { Building, Inventory } from '../wire/building.js';

/** Amenities that belong to a building rather than a unit: a building lists those its units report. */
export const BUILDING_AMENITIES: readonly string[] = [
  'DOORMAN',
  'ELEVATOR',
  'GYM',
  'ROOF_DECK',
  'LAUNDRY',
  'PARKING',
  'POOL',
  'STORAGE_SPACE',
  'SHARED_OUTDOOR_SPACE',
];

/** Bedroom label of an inventory row: `STUDIO`, `1`, `2`, ..., `UNKNOWN`. */
function bedroomLabel(n: number | null): string {
  if (n === null) return 'UNKNOWN';
  return n === 0 ? 'STUDIO' : String(n);
}

/**
 * A building's inventory of one kind from the units the mirror has seen in it: active (available)
 * and all-time (historical) counts and price ranges per bedroom count, studios first.
 */
export function inventoryOf(units: { bedroomCount: number | null; price: number; active: boolean }[]): Inventory {
  const groups = new Map<string, typeof units>();
  for (const u of units) groups.set(bedroomLabel(u.bedroomCount), [...(groups.get(bedroomLabel(u.bedroomCount)) ?? []), u]);
  const min = (xs: number[]) => (xs.length ? Math.min(...xs) : null);
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
  const byBedroom = [...groups.entries()]
    .sort(([a], [b]) => (a === 'STUDIO' ? -1 : b === 'STUDIO' ? 1 : a.localeCompare(b, 'en', { numeric: true })))
    .map(([bedrooms, group]) => {
      const active = group.filter((u) => u.active).map((u) => u.price);
      const all = group.map((u) => u.price);
      return {
        bedrooms,
        availableCount: active.length,
        minPrice: min(active),
        maxPrice: max(active),
        historicalCount: all.length,
        historicalMinPrice: min(all),
        historicalMaxPrice: max(all),
      };
    });
  return { activeCount: units.filter((u) => u.active).length, byBedroom };
}

/**
 * A building's sale inventory with its recorded sales (dollars, transfers without consideration left out)
 * counted in the historical figures: a recorded sale is a past sale of a unit whose bedrooms the city does
 * not publish, so it joins the `UNKNOWN` row (added when missing), never the available counts.
 */
export function withRecordedSales(inventory: Inventory, salePrices: number[]): Inventory {
  if (!salePrices.length) return inventory;
  const rows = inventory.byBedroom.some((r) => r.bedrooms === 'UNKNOWN')
    ? inventory.byBedroom
    : [
        ...inventory.byBedroom,
        {
          bedrooms: 'UNKNOWN',
          availableCount: 0,
          minPrice: null,
          maxPrice: null,
          historicalCount: 0,
          historicalMinPrice: null,
          historicalMaxPrice: null,
        },
      ];
  const low = Math.min(...salePrices);
  const high = Math.max(...salePrices);
  return {
    ...inventory,
    byBedroom: rows.map((r) =>
      r.bedrooms !== 'UNKNOWN'
        ? r
        : {
            ...r,
            historicalCount: r.historicalCount + salePrices.length,
            historicalMinPrice: r.historicalMinPrice === null ? low : Math.min(r.historicalMinPrice, low),
            historicalMaxPrice: r.historicalMaxPrice === null ? high : Math.max(r.historicalMaxPrice, high),
          },
    ),
  };
}

/**
 * Fields of a stored building the mirror derives from the listing that led to it (not from the site's
 * building answer): they may differ between two fetches of the same building, so they are no change.
 */
export const LISTING_DERIVED_BUILDING_FIELDS: readonly (keyof Building)[] = ['slug', 'geoCenter', 'amenities'];
