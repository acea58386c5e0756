import type { Logger } from 'pino';
import type { AreaTree } from '../domain/area.js';
import type { ListingKind, ListingRecord } from '../domain/listing.js';
import { scopeKey } from '../store/scopes-repository.js';
import { toApiAreaId, toUpstreamAreaId } from '../upstream/borough-ids.js';
import type { UpstreamClient } from '../upstream/client.js';
import { mapSearchNode, uniqueNodes } from '../upstream/mappers.js';
import type { Bound, UpstreamSearchFilters } from '../upstream/types.js';
import type { RetryPolicy } from 'cockatiel';
import { jobRetry, type JobRetry } from './job-retry.js';

/** Page size of a crawl (the site accepted 500 in a real capture). */
const CRAWL_PAGE_SIZE = 500;
/** Upper price bound of the first price band, in dollars (asking price of a sale, rent a month). */
const PRICE_CEILING = { sale: 1_000_000_000, rental: 10_000_000 } as const;

/** One part of a crawl: the filters of one search that stays under the result cap. */
interface CrawlPart {
  label: string;
  filters: UpstreamSearchFilters;
}

/**
 * How the crawl of one scope went: in how many parts it was read, how many times a part was split, and whether every
 * part fitted under the result cap (only then may a sweep trust it). Its listings went to its {@link CrawlSink}.
 */
export interface ScopeCrawl {
  parts: number;
  splits: number;
  complete: boolean;
}

/**
 * Where a crawl puts what it reads, page by page (the store's staging, `store/crawl-staging.ts`): a listing put twice
 * keeps the later record, and `clear` drops all put so far.
 */
export interface CrawlSink {
  put(records: ListingRecord[]): Promise<void>;
  clear(): Promise<void>;
}

export interface ScopeCrawlerDeps {
  client: UpstreamClient;
  /** Results one search can reach (the site's cap, about 1,000): larger scopes are split. */
  resultCap: number;
  clock: () => Date;
  logger: Logger;
  /** How a failed page (or detail batch) is waited out and asked again ({@link jobRetry}; default 5 attempts, 1 s to 30 s). */
  jobRetry?: JobRetry;
}

/**
 * Reads every listing of one scope (kind x borough) from the upstream's search: in one search when the
 * scope fits under the site's result cap, else in parts that each fit (sub-areas, price bands, bedroom
 * counts). Stores nothing itself: each page goes to the caller's {@link CrawlSink}.
 */
export class ScopeCrawler {
  private readonly pageRetry: RetryPolicy;

  constructor(private readonly deps: ScopeCrawlerDeps) {
    this.pageRetry = jobRetry(deps.jobRetry);
  }

  /**
   * Crawls the scope of `kind` in borough `boroughId` into `into`, each page as it arrives. A page that fails is
   * waited out and asked again ({@link jobRetry}).
   * @throws UpstreamError when a page still fails (what `into` holds is then part of the scope).
   */
  async crawl(kind: ListingKind, boroughId: number, tree: AreaTree, into: CrawlSink): Promise<ScopeCrawl> {
    const scope = scopeKey(kind, boroughId);
    const whole = { label: scope, filters: { areas: [toUpstreamAreaId(boroughId)] } };
    const stats = { splits: 0, complete: true };
    const total = await this.crawlPart(kind, boroughId, whole.filters, tree, into);
    if (total === null || total <= this.deps.resultCap) return { parts: 1, ...stats };
    await into.clear();
    const split: CrawlPart[] = [];
    await this.partition(kind, { ...whole, total }, tree, split, stats);
    for (const part of split) await this.crawlPart(kind, boroughId, part.filters, tree, into);
    this.deps.logger.info(
      { scope, total, parts: split.length, splits: stats.splits, complete: stats.complete },
      'scope over the result cap: crawled in parts',
    );
    return { parts: split.length, ...stats };
  }

  /**
   * Every page of one search: pages counted from `totalCount`, ended early by a short or empty page. Puts each
   * page's nodes, mapped to records of `boroughId`, into `into`; returns the total the site reported (null when absent).
   */
  private async crawlPart(kind: ListingKind, boroughId: number, filters: UpstreamSearchFilters, tree: AreaTree, into: CrawlSink) {
    let total: number | null = null;
    for (let page = 1; ; page++) {
      const answer = await this.pageRetry.execute(() =>
        this.deps.client.search(kind, {
          filters,
          page,
          perPage: CRAWL_PAGE_SIZE,
          sorting: { attribute: 'RECOMMENDED', direction: 'DESCENDING' },
        }),
      );
      if (typeof answer.totalCount === 'number') total = answer.totalCount;
      const nodes = uniqueNodes(answer.edges);
      const records: ListingRecord[] = [];
      for (const node of nodes) {
        const record = mapSearchNode(node, kind, { areas: tree, scopeBoroughId: boroughId, now: this.deps.clock() });
        if (record && record.boroughId === boroughId) records.push(record);
      }
      await into.put(records);
      const reachable = Math.min(total ?? Infinity, this.deps.resultCap);
      if (nodes.length < CRAWL_PAGE_SIZE || page * CRAWL_PAGE_SIZE >= reachable) break;
    }
    return total;
  }

  /** The total of one search (its first page of one result). */
  private async countOf(kind: ListingKind, filters: UpstreamSearchFilters): Promise<number | null> {
    const answer = await this.pageRetry.execute(() =>
      this.deps.client.search(kind, { filters, page: 1, perPage: 1, sorting: { attribute: 'RECOMMENDED', direction: 'DESCENDING' } }),
    );
    return typeof answer.totalCount === 'number' ? answer.totalCount : null;
  }

  /**
   * Splits a search over the cap into parts that each fit: first by the sub-areas of the area tree
   * (when their totals add up to the whole, so nothing filed directly under the area is lost), then
   * by price bands (bisecting), then a single price by bedroom counts. A part that cannot be split
   * further makes the crawl incomplete (no sweep).
   */
  private async partition(
    kind: ListingKind,
    part: CrawlPart & { total: number },
    tree: AreaTree,
    out: CrawlPart[],
    stats: { splits: number; complete: boolean },
  ) {
    if (part.total <= this.deps.resultCap) {
      out.push(part);
      return;
    }
    stats.splits++;
    const areaId = part.filters.areas?.length === 1 && !part.filters.price ? part.filters.areas[0] : null;
    if (areaId !== null) {
      const apiId = toApiAreaId(areaId);
      const children = tree.areas.filter((a) => a.parentId === apiId);
      if (children.length) {
        const counted = [];
        for (const child of children) {
          const filters = { ...part.filters, areas: [toUpstreamAreaId(child.id)] };
          counted.push({ label: `${part.label}>${child.slug}`, filters, total: (await this.countOf(kind, filters)) ?? Infinity });
        }
        if (counted.reduce((sum, c) => sum + c.total, 0) === part.total) {
          for (const c of counted) if (c.total > 0) await this.partition(kind, c, tree, out, stats);
          return;
        }
      }
    }
    const price: Bound = part.filters.price ?? { lowerBound: 0, upperBound: PRICE_CEILING[kind] };
    const [low, high] = [price.lowerBound ?? 0, price.upperBound ?? PRICE_CEILING[kind]];
    if (high > low) {
      const middle = Math.floor((low + high) / 2);
      for (const band of [
        { lowerBound: low, upperBound: middle },
        { lowerBound: middle + 1, upperBound: high },
      ]) {
        const filters = { ...part.filters, price: band };
        const total = (await this.countOf(kind, filters)) ?? Infinity;
        if (total > 0)
          await this.partition(kind, { label: `${part.label}|$${band.lowerBound}-${band.upperBound}`, filters, total }, tree, out, stats);
      }
      return;
    }
    if (!part.filters.bedrooms) {
      let covered = 0;
      const byBeds = [];
      for (let beds = 0; beds <= 10; beds++) {
        const filters = { ...part.filters, bedrooms: beds === 10 ? { lowerBound: 10 } : { lowerBound: beds, upperBound: beds } };
        const total = (await this.countOf(kind, filters)) ?? Infinity;
        covered += total;
        if (total > 0) byBeds.push({ label: `${part.label}|beds:${beds}`, filters, total });
      }
      if (covered === part.total && byBeds.every((b) => b.total <= this.deps.resultCap)) {
        out.push(...byBeds);
        return;
      }
    }
    this.deps.logger.warn(
      { part: part.label, total: part.total, cap: this.deps.resultCap },
      'a crawl part cannot be split under the result cap: the scope will not be swept',
    );
    stats.complete = false;
    out.push(part);
  }
}
