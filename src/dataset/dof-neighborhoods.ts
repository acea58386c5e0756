/**
 * NYC Department of Finance sales neighbourhood names that are not the name of an upstream area, and
 * the upstream area (Manhattan, upstream numbering) each is filed under. Every other DOF name is
 * matched to the area of the same name, case-insensitively.
 */
export const DOF_NEIGHBORHOOD_AREA: Readonly<Record<string, number>> = {
  'ALPHABET CITY': 117, // East Village
  CLINTON: 152, // Hell's Kitchen
  FASHION: 122, // Midtown South
  FINANCIAL: 104, // Financial District
  GRAMERCY: 113, // Gramercy Park
  'GREENWICH VILLAGE-CENTRAL': 116, // Greenwich Village
  'GREENWICH VILLAGE-WEST': 157, // West Village
  'HARLEM-CENTRAL': 154, // Central Harlem
  'HARLEM-EAST': 155, // East Harlem
  'HARLEM-UPPER': 154, // Central Harlem (north of 130th Street)
  'HARLEM-WEST': 153, // West Harlem
  'JAVITS CENTER': 146, // Hudson Yards
  'MIDTOWN CBD': 120, // Midtown
  SOUTHBRIDGE: 114, // Fulton/Seaport
  'UPPER EAST SIDE (59-79)': 140, // Upper East Side
  'UPPER EAST SIDE (79-96)': 140,
  'UPPER EAST SIDE (96-110)': 140,
  'UPPER WEST SIDE (59-79)': 137, // Upper West Side
  'UPPER WEST SIDE (79-96)': 137,
  'UPPER WEST SIDE (96-116)': 137,
  'WASHINGTON HEIGHTS LOWER': 149, // Washington Heights
  'WASHINGTON HEIGHTS UPPER': 149,
};
