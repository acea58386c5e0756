import type { LocalListingNode } from '../upstream/local/site-data.js';

/**
 * A listing of the local upstream from what its source row gives (`known`), every other fact unknown:
 * null, no amenities, a living area of 0 (the site's way of saying unknown), state NY.
 */
export function listingNode(
  known: Pick<LocalListingNode, 'id' | 'price' | 'status' | 'urlPath'> & Partial<LocalListingNode>,
): LocalListingNode {
  return {
    areaName: null,
    bedroomCount: null,
    fullBathroomCount: null,
    halfBathroomCount: null,
    buildingType: null,
    geoPoint: null,
    leadPhotoKey: null,
    netEffectivePrice: null,
    monthsFree: null,
    noFee: null,
    furnished: null,
    availableAt: null,
    livingAreaSize: 0,
    sourceGroupLabel: null,
    street: null,
    unit: null,
    zipCode: null,
    state: 'NY',
    tier: null,
    hasTour3d: null,
    hasVideos: null,
    listedAt: null,
    amenities: [],
    petsAllowed: null,
    yearBuilt: null,
    ...known,
  };
}
