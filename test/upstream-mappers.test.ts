import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AreaTree } from '../src/domain/area.js';
import { toApiAreaId, toUpstreamAreaId } from '../src/upstream/borough-ids.js';
import { buildingSlugFromUrlPath, mapAreas, mapBuilding, mapListingNode, uniqueNodes } from '../src/upstream/mappers.js';
import type { UpstreamArea, UpstreamSearchResult } from '../src/upstream/types.js';

// Fixtures are written in exactly the shapes the upstream site's public clients document.
const fixture = <T>(name: string): T => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'upstream', name), 'utf8')) as T;
const areas = mapAreas(fixture<UpstreamArea[]>('areas.json'));
const tree = new AreaTree(areas);
const now = new Date('2026-11-22T12:00:00Z');

describe('borough ids at the boundary', () => {
  it('swaps the four differing borough ids both ways and keeps every other id', () => {
    expect([100, 200, 300, 400, 500].map(toApiAreaId)).toEqual([100, 400, 200, 300, 500]);
    expect([100, 200, 300, 400, 500].map(toUpstreamAreaId)).toEqual([100, 300, 400, 200, 500]);
    for (const id of [100, 200, 300, 400, 500, 301, 225, 1000002]) expect(toUpstreamAreaId(toApiAreaId(id))).toBe(id);
    expect(toApiAreaId(301)).toBe(301);
  });

  it('maps the area list: NYC only, API borough ids, parents swapped, levels and slugs', () => {
    const byId = new Map(areas.map((a) => [a.id, a]));
    expect(areas.map((a) => a.id).sort((a, b) => a - b)).toEqual([100, 144, 200, 225, 226, 300, 301, 400, 402, 403, 500]);
    expect(byId.get(200)).toEqual({ id: 200, name: 'Brooklyn', level: 0, parentId: null, slug: 'brooklyn' });
    expect(byId.get(400)!.name).toBe('Bronx');
    expect(byId.get(301)).toMatchObject({ parentId: 200, level: 2, slug: 'greenpoint' });
    expect(byId.get(225)).toMatchObject({ parentId: 400, level: 2 });
    expect(byId.get(402)).toMatchObject({ parentId: 300, level: 1, slug: 'long-island-city' });
    // Marble Hill hangs under All Upper Manhattan: its borough comes from the tree, not its id's digits.
    expect(tree.boroughOf(226)).toBe(100);
  });
});

describe('search answers', () => {
  const answer = fixture<{ data: { searchRentals: UpstreamSearchResult } }>('search-rentals.json').data.searchRentals;

  it('de-duplicates featured and sponsored edges by id', () => {
    expect(uniqueNodes(answer.edges).map((n) => n.id)).toEqual(['4711001', '4711002', '4711003']);
  });

  it('maps a rental node field by field', () => {
    const record = mapListingNode(answer.edges[0].node, 'rental', { areas: tree, scopeBoroughId: 200, now })!;
    expect(record).toMatchObject({
      id: '4711001',
      kind: 'rental',
      areaId: 301,
      boroughId: 200,
      address: { street: '145 Java Street', unit: '3B', city: 'Brooklyn', state: 'NY', zipCode: '11222' },
      price: 3400,
      netEffective: 3116.67,
      monthsFree: 1,
      sqft: 650,
      leadPhotoKey: 'a1b2c3d4e5',
      has3dTour: true,
      hasVideo: false,
      openHouseEnd: '2026-11-29T16:00:00Z',
      buildingSlug: '145-java-street-brooklyn',
      listedAt: null,
      tier: 'BASIC',
    });
  });

  it('drops listings outside New York State', () => {
    expect(mapListingNode(answer.edges[2].node, 'rental', { areas: tree, now })).toBeNull();
  });

  it('reads livingAreaSize 0 as unknown and a photo-less leadMedia as no photo', () => {
    const record = mapListingNode(answer.edges[3].node, 'rental', { areas: tree, now })!;
    expect(record.sqft).toBeNull();
    expect(record.leadPhotoKey).toBeNull();
    expect(record).toMatchObject({ areaId: 225, boroughId: 400, address: { city: 'Bronx' }, buildingSlug: null, halfBathroomCount: 1 });
  });

  it('maps a sale node: days on market become a listing date, charges are kept', () => {
    const node = fixture<{ data: { searchSales: UpstreamSearchResult } }>('search-sales.json').data.searchSales.edges[0].node;
    const record = mapListingNode(node, 'sale', { areas: tree, now })!;
    expect(record).toMatchObject({ areaId: 402, boroughId: 300, saleType: 'RESALE', monthlyTaxes: 410, monthlyCommonCharges: 780, monthlyMaintenance: null });
    expect(record.listedAt).toBe('2026-11-10T12:00:00.000Z');
  });

  it('finds the building slug in the site\'s url paths', () => {
    expect(buildingSlugFromUrlPath('/building/the-dakota/4b')).toBe('the-dakota');
    expect(buildingSlugFromUrlPath('/rental/123')).toBeNull();
  });

  it('maps a building: area id swapped to the API\'s, breadcrumbs from the borough down', () => {
    const building = mapBuilding(
      { id: '77', slug: 'x-building', name: 'X', area: { id: 403, name: 'Hunters Point' }, nycData: { communityDistrict: 402 } },
      tree,
    );
    expect(building.area).toEqual({
      id: 403,
      name: 'Hunters Point',
      slug: 'hunters-point',
      breadcrumbs: [
        { name: 'Queens', url: '/v1/search/sales?areas=300' },
        { name: 'Long Island City', url: '/v1/search/sales?areas=402' },
        { name: 'Hunters Point', url: '/v1/search/sales?areas=403' },
      ],
    });
    expect(building.nycData).toMatchObject({ communityDistrict: 402, councilDistrict: null });
    expect(building.saleInventory).toEqual({ activeCount: 0, byBedroom: [] });
  });
});
