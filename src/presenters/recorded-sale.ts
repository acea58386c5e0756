import type { RecordedSaleRow } from '../domain/city-records.js';
import { buildingClassDescription } from '../reference/building-classes.js';
import type { RecordedSale } from '../wire/recorded-sale.js';

/** A stored recorded sale as the API shows it. */
export function presentRecordedSale(r: RecordedSaleRow): RecordedSale {
  const num = (v: number | string | null) => (v === null ? null : Number(v));
  return {
    id: r.id,
    boroughId: r.borough_id,
    bbl: r.bbl,
    address: { street: r.address?.split(',')[0] ?? null, unit: r.apartment_number, city: null, state: 'NY', zipCode: r.zip_code },
    neighborhood: r.neighborhood,
    buildingClassCategory: r.building_class_category,
    buildingClass: r.building_class,
    buildingClassDescription: buildingClassDescription(r.building_class),
    taxClass: r.tax_class,
    residentialUnits: r.residential_units,
    commercialUnits: r.commercial_units,
    totalUnits: r.total_units,
    landSquareFeet: num(r.land_square_feet),
    grossSquareFeet: num(r.gross_square_feet),
    yearBuilt: r.year_built,
    salePrice: num(r.sale_price),
    saleDate: r.sale_date,
    pricePerSqft: num(r.price_per_sqft),
    noConsideration: Number(r.no_consideration) === 1,
    geoPoint: r.latitude !== null && r.longitude !== null ? { latitude: Number(r.latitude), longitude: Number(r.longitude) } : null,
    positionSource: r.position_source as RecordedSale['positionSource'],
    areaId: r.area_id,
    buildingId: r.building_id,
  };
}
