import { describe, expect, it } from 'vitest';
import { addressKey, bblOf, parseAddress, recordedSaleFromSoda, statePlaneToWgs84, taxLotFromSoda } from '../../src/domain/city-records.js';
import { median, recordedSalesByMonth } from '../../src/domain/market.js';

const SALE = {
  ':id': 'row-1',
  ':updated_at': '2024-03-12T00:00:00.000Z',
  borough: '3',
  neighborhood: 'PARK SLOPE',
  building_class_category: '13 CONDOS - ELEVATOR APARTMENTS',
  block: '1066',
  lot: '1203',
  address: '1 PROSPECT PARK WEST, 4B',
  apartment_number: '4B',
  zip_code: '11215',
  gross_square_feet: '1000',
  year_built: '0',
  building_class_at_time_of_sale: 'R4',
  sale_price: '1250000',
  sale_date: '2023-05-01T00:00:00.000',
};

describe('city records from SODA rows', () => {
  it('a recorded sale: BBL from borough, block and lot; price per square foot; 0 years and sizes unknown', () => {
    expect(recordedSaleFromSoda(SALE)).toMatchObject({
      id: 'row-1',
      borough_id: 200,
      bbl: '3010661203',
      sale_price: 1_250_000,
      sale_date: '2023-05-01',
      price_per_sqft: 1250,
      no_consideration: 0,
      year_built: null,
      building_class: 'R4',
      updated_at: '2024-03-12T00:00:00.000Z',
      latitude: null,
    });
  });

  it('a sale under $10,000 or without a price is a transfer without consideration, with no price per square foot', () => {
    expect(recordedSaleFromSoda({ ...SALE, sale_price: '9999' })).toMatchObject({
      sale_price: 9999,
      no_consideration: 1,
      price_per_sqft: null,
    });
    expect(recordedSaleFromSoda({ ...SALE, sale_price: '10000' })).toMatchObject({ no_consideration: 0, price_per_sqft: 10 });
    const { sale_price: _, ...unpriced } = SALE;
    expect(recordedSaleFromSoda(unpriced)).toMatchObject({ sale_price: null, no_consideration: 1, price_per_sqft: null });
  });

  it('a row without a borough or a sale date is not a sale; without block or lot it has no BBL', () => {
    expect(recordedSaleFromSoda({ ...SALE, borough: '9' })).toBeNull();
    const { sale_date: _, ...undated } = SALE;
    expect(recordedSaleFromSoda(undated)).toBeNull();
    expect(bblOf('1', undefined, '5')).toBeNull();
    expect(bblOf('1', '1', '10')).toBe('1000010010');
  });

  it('addresses reduce to one key across spellings', () => {
    expect(addressKey('347 East 4th Street, 2B')).toBe('347 E 4 ST');
    expect(addressKey('347 E 4TH   ST')).toBe('347 E 4 ST');
    expect(addressKey('1 Fifth Avenue')).toBe('1 FIFTH AVE');
    expect(addressKey('')).toBeNull();
  });

  it("PLUTO's State Plane feet convert to WGS84 (Castle Williams, Governors Island, lot 1000010010)", () => {
    const p = statePlaneToWgs84(979071, 190225);
    expect(p.latitude).toBeCloseTo(40.6888, 3);
    expect(p.longitude).toBeCloseTo(-74.0187, 3);
  });

  it('a tax lot: BBL from its number, floors rounded up, 0 floors unknown', () => {
    const lot = taxLotFromSoda({
      ':id': 'r',
      ':updated_at': 'x',
      bbl: '1000010010.00',
      borough: 'MN',
      block: '1',
      lot: '10',
      cd: '101',
      council: '1',
      policeprct: '1',
      numfloors: '2.50',
      xcoord: '979071',
      ycoord: '190225',
    });
    expect(lot).toMatchObject({ bbl: '1000010010', borough_id: 100, community_district: 101, floor_count: 3, police_precinct: 1 });
    expect(
      taxLotFromSoda({ ':id': 'r', ':updated_at': 'x', bbl: '1000010010', borough: 'MN', block: '1', lot: '10', numfloors: '0.00' }),
    ).toMatchObject({ floor_count: null, latitude: null });
  });
});

describe('a street address as a caller writes it', () => {
  it.each([
    ['56 West 45th Street, Manhattan', { key: '56 W 45 ST', zipCode: null, boroughId: 100 }],
    ['56 W 45 St, New York, NY 10036', { key: '56 W 45 ST', zipCode: '10036', boroughId: 100 }],
    ['37-12 75th St, Jackson Heights, NY 11372-1234', { key: '37-12 75 ST', zipCode: '11372', boroughId: null }],
    ['100 Broadway, Brooklyn', { key: '100 BROADWAY', zipCode: null, boroughId: 200 }],
    ['1 Richmond Terrace, staten island', { key: '1 RICHMOND TER', zipCode: null, boroughId: 500 }],
    ['Broadway, Manhattan', null],
    ['   ', null],
  ])('%s', (text, expected) => {
    expect(parseAddress(text)).toEqual(expected);
  });
});

describe('monthly figures of recorded sales', () => {
  it('medians interpolate between the two middle values; every month of the range is listed', () => {
    expect(median([3, 1, 2, 10])).toBe(2.5);
    expect(median([])).toBeNull();
    const months = recordedSalesByMonth(
      [
        { sale_date: '2023-11-03', sale_price: 100, price_per_sqft: null },
        { sale_date: '2023-11-20', sale_price: 300, price_per_sqft: 2 },
        { sale_date: '2024-01-02', sale_price: 50, price_per_sqft: 1 },
      ],
      '2023-11',
      '2024-01',
    );
    expect(months).toEqual([
      { month: '2023-11', saleCount: 2, medianPrice: 200, medianPricePerSqft: 2 },
      { month: '2023-12', saleCount: 0, medianPrice: null, medianPricePerSqft: null },
      { month: '2024-01', saleCount: 1, medianPrice: 50, medianPricePerSqft: 1 },
    ]);
  });
});
