import { addressKey } from '../domain/city-records.js';
import { boundingBox, decodeOutline, outlineContains, type BoundingBox, type Outline } from '../domain/outline.js';
import type { Districts } from '../domain/city-districts.js';
import type { AreasRepository } from '../store/areas-repository.js';
import type { BuildingsRepository } from '../store/buildings-repository.js';
import type { CityRecordsRepository, SaleAddress, SalePlace } from '../store/city-records-repository.js';
import { districtColumns } from '../store/schema.js';

type Place = { latitude: number; longitude: number };

/**
 * Gives a recorded sale its position, building and area (docs/open-data.md, "Positions"):
 * 1. the tax lot of its BBL (PLUTO); else the lot on its block at the same address (a condominium unit's
 *    BBL is the unit's, PLUTO holds the complex's billing lot on the same block); else the lot at the same
 *    address and ZIP code (a publication without block and lot);
 * 2. else a mirrored building at the same address and ZIP code, which also becomes the sale's building;
 * 3. else none. The area is the deepest of the mirror's areas whose outline holds the position, and the districts
 *    those whose city polygon holds it; a sale without a position has none (it still counts in its borough).
 * A sale at a building's address is linked to it whichever way it was positioned.
 */
export class SalePositioner {
  private constructor(
    private readonly lotsByBbl: Map<string, Place>,
    private readonly lotsByBlockAddress: Map<string, Place>,
    private readonly lotsByAddressZip: Map<string, Place>,
    private readonly buildings: Map<string, { id: string; place: Place | null; areaId: number | null }>,
    private readonly areas: { id: number; level: number; outline: Outline; box: BoundingBox }[],
    private readonly districtsAt: (place: Place) => Districts,
  ) {}

  /** Districts by position, looked up once a run: the sales of one lot (a condominium's units) share its position. */
  private readonly districtsByPlace = new Map<string, Districts>();

  /** Reads the tax lots, buildings and area outlines the mirror holds now; `districtsAt` gives a position's districts (the city's polygons). */
  static async load(
    records: CityRecordsRepository,
    buildings: BuildingsRepository,
    areas: AreasRepository,
    districtsAt: (place: Place) => Districts,
  ): Promise<SalePositioner> {
    const byBbl = new Map<string, Place>();
    const byBlockAddress = new Map<string, Place>();
    const byAddressZip = new Map<string, Place>();
    for (const lot of await records.lotsForMatching()) {
      if (lot.latitude === null || lot.longitude === null) continue;
      const place = { latitude: lot.latitude, longitude: lot.longitude };
      byBbl.set(lot.bbl, place);
      if (lot.address_key) byBlockAddress.set(`${lot.borough_id}|${lot.block}|${lot.address_key}`, place);
      if (lot.address_key && lot.zip_code) byAddressZip.set(`${lot.address_key}|${lot.zip_code}`, place);
    }
    const byAddress = new Map<string, { id: string; place: Place | null; areaId: number | null }>();
    for (const b of await buildings.places()) {
      const key = addressKey(b.street);
      if (!key || !b.zipCode) continue;
      const place = b.latitude !== null && b.longitude !== null ? { latitude: b.latitude, longitude: b.longitude } : null;
      // Two buildings at one address (a listing site's duplicates): the first by id, so the choice is stable.
      const k = `${key}|${b.zipCode}`;
      const held = byAddress.get(k);
      if (!held || b.id < held.id) byAddress.set(k, { id: b.id, place, areaId: b.areaId });
    }
    const outlines: { id: number; level: number; outline: Outline; box: BoundingBox }[] = [];
    for (const a of await areas.list()) {
      const outline = decodeOutline(a.outline);
      if (outline) outlines.push({ id: a.id, level: a.level, outline, box: boundingBox(outline) });
    }
    // Deepest first: the first outline holding a point is its most precise area.
    outlines.sort((a, b) => b.level - a.level || a.id - b.id);
    return new SalePositioner(byBbl, byBlockAddress, byAddressZip, byAddress, outlines, districtsAt);
  }

  /** The sale's position, its source, its building, its area and its districts. */
  position(sale: SaleAddress): SalePlace {
    const key = addressKey(sale.address);
    const lot =
      (sale.bbl ? this.lotsByBbl.get(sale.bbl) : undefined) ??
      (key && sale.block ? this.lotsByBlockAddress.get(`${sale.borough_id}|${sale.block}|${key}`) : undefined) ??
      (key && sale.zip_code ? this.lotsByAddressZip.get(`${key}|${sale.zip_code}`) : undefined);
    const building = key && sale.zip_code ? this.buildings.get(`${key}|${sale.zip_code}`) : undefined;
    const place = lot ?? building?.place ?? null;
    return {
      latitude: place?.latitude ?? null,
      longitude: place?.longitude ?? null,
      position_source: lot ? 'tax-lot' : building?.place ? 'building' : null,
      building_id: building?.id ?? null,
      area_id: place ? this.areaAt(place) : null,
      ...districtColumns(place ? this.districtsOf(place) : { communityDistrict: null, policePrecinct: null, schoolDistrict: null }),
    };
  }

  private districtsOf(place: Place): Districts {
    const key = `${place.latitude},${place.longitude}`;
    let found = this.districtsByPlace.get(key);
    if (!found) {
      found = this.districtsAt(place);
      this.districtsByPlace.set(key, found);
    }
    return found;
  }

  private areaAt(place: Place): number | null {
    for (const area of this.areas) if (outlineContains(area.outline, place, area.box)) return area.id;
    return null;
  }
}
