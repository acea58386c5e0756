import { inventoryOf } from '../domain/building.js';
import type { ListingKind } from '../domain/listing.js';
import type { Building } from '../wire/building.js';

/** A unit of a building as the mirror's listings give it (price in dollars). */
export interface BuildingUnit {
  kind: ListingKind;
  status: string;
  bedroomCount: number | null;
  price: number;
}

/** The building with its rental and sale inventories counted from the mirror's listings in it (`units`). */
export function withInventories(building: Building, units: BuildingUnit[]): Building {
  const of = (kind: ListingKind) =>
    inventoryOf(
      units.filter((u) => u.kind === kind).map((u) => ({ bedroomCount: u.bedroomCount, price: u.price, active: u.status === 'ACTIVE' })),
    );
  return { ...building, rentalInventory: of('rental'), saleInventory: of('sale') };
}
