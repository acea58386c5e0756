/**
 * The city's files in the shared data folder (`SHARED_DATA_DIR`, provenance in its README), relative to it: what the
 * local SODA emulator serves, and the district polygons the service reads itself.
 */
export const CITY_FILES = {
  rollingSales2016: 'rolling-sales/nyc-rolling-sales.csv.gz',
  manhattanSales2022: 'rolling-sales/manhattan-2022-2023.csv',
  rollingSales2023: 'rolling-sales/2023-2024',
  pluto: 'pluto/pluto-16v2-manhattan.csv.gz',
  councilDistricts: 'council-districts/nycc-2023-lines.geojson.gz',
  hurricaneZones: 'hurricane-zones/hurricane-zones-2021.geojson.gz',
  communityDistricts: 'community-districts/community-districts.geojson.gz',
  policePrecincts: 'police-precincts/police-precincts.geojson.gz',
  schoolDistricts: 'school-districts/school-districts.geojson.gz',
} as const;
