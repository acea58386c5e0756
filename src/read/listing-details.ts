import type { Config } from '../config.js';
import { KNOWN_AMENITIES, type ListingKind } from '../domain/listing.js';
import type { Estimator } from '../estimate/estimator.js';
import { oldestOf, type Freshness } from '../freshness/policy.js';
import { settledWithin } from '../lib/settled-within.js';
import { rowToDetail } from '../presenters/listing.js';
import type { SeenListingRow } from '../store/listing-rows.js';
import type { ListingsRepository, StoredDetail } from '../store/listings-repository.js';
import type { ListingDetail } from '../wire/listing.js';
import type { Refresher } from './read-deps.js';
import type { UpstreamDeadline } from './upstream-deadline.js';

/** What listing details are read with: the read service's judges of freshness, its estimator and its deadline. */
export interface ListingDetailsDeps {
  listings: ListingsRepository;
  refresher: Refresher;
  config: Pick<Config, 'freshness' | 'hydration'>;
  clock: () => Date;
  estimator: Estimator;
  deadline: UpstreamDeadline;
  /** Whether a refresh may start now (false while the upstream's breaker is open). */
  canRefresh: () => boolean;
  /** Judges data refreshed at `refreshedAt` under `key`, `refresh` started in the background when stale. */
  freshness: (key: string, refreshedAt: Date, threshold: number, refresh: () => Promise<unknown>) => Promise<Freshness>;
  /** Freshness of a resource fetched from upstream by this very request. */
  fetchedNow: (threshold: number) => Freshness;
}

/**
 * Listings' details with the freshness rule (a part of ReadService): from the mirror, hydrated while the caller waits
 * (at most `hydration.waitSeconds`) when they still lack their details, or fetched from upstream when not stored.
 */
export class ListingDetails {
  constructor(private readonly deps: ListingDetailsDeps) {}

  /**
   * A stored listing's detail, as {@link ListingsRepository.detailById} reads it (one query), with its estimate from
   * the same computation as {@link ReadService.estimateOfListing}.
   */
  private async present(found: StoredDetail, freshness: Freshness): Promise<{ listing: ListingDetail; freshness: Freshness }> {
    const valued = await this.deps.estimator.ofListing(found.row);
    return { listing: rowToDetail(found.row, found.amenities, KNOWN_AMENITIES, found.history, this.deps.clock(), valued), freshness };
  }

  /** A stored listing's detail: hydrated first if it still waits for its details, judged as it was held. */
  private async storedDetail(found: StoredDetail): Promise<{ listing: ListingDetail; freshness: Freshness }> {
    const hydrated = await this.hydrated(found);
    return this.present(hydrated, await this.judgeListing(found.row));
  }

  /**
   * A stored listing's freshness: as old as its last crawl or detail, whichever is newer (one no crawl saw, a synthetic
   * listing, as old as its first sighting); refreshed when stale.
   */
  judgeListing(row: SeenListingRow): Promise<Freshness> {
    const threshold = this.deps.config.freshness.propertySeconds;
    const refreshedAt = [row.last_seen_at ?? row.first_seen_at, row.detail_fetched_at]
      .filter((v): v is string => !!v)
      .sort()
      .at(-1)!;
    return this.deps.freshness(`listing:${row.id}`, new Date(refreshedAt), threshold, () =>
      this.deps.refresher.refreshListing(row.id, row.kind as ListingKind),
    );
  }

  /**
   * Hydrates a stored listing that still waits for its details while the caller waits, at most
   * `hydration.waitSeconds`; on a timeout or an upstream failure the listing is answered as held.
   */
  private async hydrated(found: StoredDetail): Promise<StoredDetail> {
    const row = found.row;
    if (!row.needs_detail || !this.deps.canRefresh()) return found;
    const hydration = this.deps.refresher.hydrate(row.kind as ListingKind, [row.id], 'interactive');
    const outcome = await settledWithin(hydration, this.deps.config.hydration.waitSeconds);
    if (outcome !== 'done') return found;
    return (await this.deps.listings.detailById(row.id)) ?? found;
  }

  /** One listing's detail by upstream id; fetched from upstream when not stored; null when upstream has none. */
  async listing(id: string): Promise<{ listing: ListingDetail; freshness: Freshness } | null> {
    const stored = await this.deps.listings.detailById(id);
    if (stored) return this.storedDetail(stored);
    if (!(await this.deps.deadline.run(`listing:${id}`, () => this.deps.refresher.refreshListing(id, undefined, 'interactive'))))
      return null;
    const fetched = await this.deps.listings.detailById(id);
    if (!fetched) return null;
    return this.present(fetched, this.deps.fetchedNow(this.deps.config.freshness.propertySeconds));
  }

  /**
   * Several listings' details by upstream id, in the order asked, from the mirror only (an id it does
   * not hold is listed in `missing`, never fetched: a batch must not become a burst of upstream calls).
   * Freshness is that of the oldest listing answered; stale ones are refreshed in the background.
   */
  async listingsByIds(ids: string[]): Promise<{ listings: ListingDetail[]; missing: string[]; freshness: Freshness }> {
    const listings: ListingDetail[] = [];
    const missing: string[] = [];
    const judged: Freshness[] = [];
    for (const id of ids) {
      const stored = await this.deps.listings.detailById(id);
      if (!stored) {
        missing.push(id);
        continue;
      }
      const answer = await this.storedDetail(stored);
      listings.push(answer.listing);
      judged.push(answer.freshness);
    }
    return { listings, missing, freshness: oldestOf(judged, this.deps.config.freshness.propertySeconds, this.deps.clock()) };
  }

  /**
   * One listing's detail by its path on the upstream site. `/rental/<id>` and `/sale/<id>` are fetched
   * from upstream when not stored; `/building/<slug>/<unit>` paths are answered from the mirror only.
   */
  async listingByUrlPath(path: string): Promise<{ listing: ListingDetail; freshness: Freshness } | null> {
    const id = await this.deps.listings.idByUrlPath(path);
    const found = id === undefined ? undefined : await this.deps.listings.detailById(id);
    if (found) return this.storedDetail(found);
    const direct = /^\/(rental|sale)\/([A-Za-z0-9_-]+)$/.exec(path);
    if (!direct) return null;
    return this.listing(direct[2]);
  }
}
