import type { Generated } from 'kysely';
import type { RecordedSaleRow, TaxLotRow } from '../domain/city-records.js';
import type { DistrictName, Districts } from '../domain/city-districts.js';
import type {
  ApiKeysTable,
  BillingEventsTable,
  BillingSubscriptionsTable,
  KeyRevealsTable,
  QuotaUsageDaysTable,
  QuotaUsageTable,
} from './access-tables.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookSubscriptionsTable } from './webhook-tables.js';

export type * from './access-tables.js';
export type * from './webhook-tables.js';

/**
 * Tables of the mirror. Instants are ISO 8601 UTC strings (they sort as text), booleans are 0/1
 * integers, money in US dollars, areas in square feet: the same on SQLite and PostgreSQL.
 */
export interface AreasTable {
  id: number;
  name: string;
  level: number;
  parent_id: number | null;
  slug: string;
  borough_id: number;
  /** The site's outline, a Google encoded polyline; null when unknown. */
  outline: string | null;
}

export interface ListingsTable {
  id: string;
  kind: string;
  status: string;
  area_id: number | null;
  borough_id: number | null;
  area_name: string | null;
  street: string | null;
  unit: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  price: number;
  bedroom_count: number | null;
  full_bathroom_count: number | null;
  half_bathroom_count: number | null;
  building_type: string | null;
  latitude: number | null;
  longitude: number | null;
  lead_photo_key: string | null;
  source_group_label: string | null;
  url_path: string | null;
  tier: string | null;
  listed_at: string | null;
  net_effective: number | null;
  months_free: number | null;
  sqft: number | null;
  price_per_sqft: number | null;
  rooms: number | null;
  lease_term: number | null;
  furnished: number | null;
  available_at: string | null;
  sale_type: string | null;
  no_fee: number | null;
  pets_allowed: number | null;
  has_3d_tour: number | null;
  has_video: number | null;
  open_house_start: string | null;
  open_house_end: string | null;
  monthly_taxes: number | null;
  monthly_maintenance: number | null;
  monthly_common_charges: number | null;
  /** Sum of the known monthly charges (maintenance + common charges + taxes), dollars a month. */
  monthly_charges: number;
  year_built: number | null;
  building_id: string | null;
  building_slug: string | null;
  transit_score: number | null;
  recommended_score: number;
  /** The districts holding the listing's position (DISTRICT_COLUMNS); null in none or without a position. */
  community_district: number | null;
  police_precinct: number | null;
  school_district: number | null;
  /**
   * How far the asking price is from the estimate, percent, a tenth's precision (`-5`: 5 % under); null until the
   * valuation after a sync (estimate/valuation.ts) values it, or when it has no estimate. Migration 030.
   */
  price_position: Generated<number | null>;
  /** The listings' data version its searched or shown columns were last written at (migration 031); 0 before. */
  data_version: Generated<number>;
  /** JSON: `{fees, contacts, photos, floorPlanKey, upstreamPriceHistory}`. */
  details: string;
  first_seen_at: string;
  detail_fetched_at: string | null;
  delisted_at: string | null;
  /**
   * 1 while the listing waits for hydration through the detail queries (new, or its price or status changed);
   * 2 when parked after `HYDRATION_MAX_FAILURES` failed detail requests; 0 when hydrated.
   */
  needs_detail: number;
  /** Failed detail requests since the listing was last hydrated, and the last one's cause. */
  detail_failures: Generated<number>;
  detail_error: Generated<string | null>;
  /** 1 for a listing `nyc-listings seed` derived for benchmarks; never swept by a sync. */
  synthetic: Generated<number>;
}

export interface ListingAmenitiesTable {
  listing_id: string;
  amenity: string;
}

/** When a crawl last saw each listing (migration 033): a narrow row, rewritten at every crawl that sees it. */
export interface ListingSightingsTable {
  listing_id: string;
  /** UTC ISO 8601. */
  last_seen_at: string;
}

/** One listing of a crawl staged before its write (migration 036). */
export interface CrawlStagingTable {
  /** The crawl's own id (random). */
  crawl_id: string;
  listing_id: string;
  /** The listing's record (`ListingRecord`) as JSON. */
  record: string;
  /** UTC ISO 8601. */
  staged_at: string;
}

export interface PriceHistoryTable {
  listing_id: string;
  recorded_at: string;
  date: string;
  price: number;
  event: string;
  pct_change: number | null;
}

export interface BuildingsTable {
  id: string;
  slug: string;
  /** JSON of the API building (spec 2.6). */
  data: string;
  fetched_at: string;
}

export interface SyncScopesTable {
  scope: string;
  last_success_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  listing_count: number | null;
}

/** One day's market figures of a kind in an area (0: the whole city); `figures` is JSON of MarketFigures. */
export interface MarketSnapshotsTable {
  day: string;
  kind: string;
  area_id: number;
  figures: string;
  recorded_at: string;
}

/**
 * One change a sync applied: `listing.listed`, `listing.price_changed`, `listing.status_changed`; `data`
 * is JSON `{listing (summary after the change), oldPrice, newPrice, pctChange, fromStatus, toStatus}`.
 */
export interface ChangeEventsTable {
  id: Generated<number>;
  type: string;
  listing_id: string | null;
  building_id: string | null;
  kind: string | null;
  area_id: number | null;
  /** Dollars (a month for rentals), after the change; null for a building event. */
  price: number | null;
  bedrooms: number | null;
  occurred_at: string;
  data: string;
}

export interface Database {
  areas: AreasTable;
  listings: ListingsTable;
  listing_amenities: ListingAmenitiesTable;
  listing_sightings: ListingSightingsTable;
  crawl_staging: CrawlStagingTable;
  price_history: PriceHistoryTable;
  buildings: BuildingsTable;
  sync_scopes: SyncScopesTable;
  api_keys: ApiKeysTable;
  quota_usage: QuotaUsageTable;
  quota_usage_days: QuotaUsageDaysTable;
  billing_subscriptions: BillingSubscriptionsTable;
  billing_events: BillingEventsTable;
  key_reveals: KeyRevealsTable;
  market_snapshots: MarketSnapshotsTable;
  change_events: ChangeEventsTable;
  change_log_state: { pruned_through: number };
  /** Write counters per table (`listings`), incremented by every write transaction that changes it. */
  data_versions: { name: string; version: number };
  /** NYC Open Data (issue 30): DOF's recorded sales and PLUTO's tax lots, mirrored from SODA. */
  recorded_sales: RecordedSaleRow;
  tax_lots: TaxLotRow;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  kysely_migration?: { name: Generated<string> };
}

/**
 * The column of each district (domain/city-districts.ts) in the tables of positioned things, `listings` and
 * `recorded_sales`: the district whose polygon holds the row's position, null in none or without a position.
 */
export const DISTRICT_COLUMNS = {
  communityDistrict: 'community_district',
  policePrecinct: 'police_precinct',
  schoolDistrict: 'school_district',
} as const satisfies Record<DistrictName, string>;

/** The district columns of a row, from its {@link Districts}. */
export function districtColumns(d: Districts): {
  community_district: number | null;
  police_precinct: number | null;
  school_district: number | null;
} {
  return { community_district: d.communityDistrict, police_precinct: d.policePrecinct, school_district: d.schoolDistrict };
}
