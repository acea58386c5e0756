import type { Config } from './config.js';
import { buildSiteData } from './dataset/build-site-data.js';
import type { SiteData } from './upstream/local/site-data.js';
import { LocalMarket } from './upstream/local/market.js';
import { MarketClock } from './upstream/local/market-clock.js';
import { parseFaults } from './upstream/faults.js';
import { startLocalUpstream, type LocalUpstream } from './upstream/local/server.js';

/** The local upstream as configured: the site's emulator on loopback and its market clock (null when off). */
export interface LocalSite {
  upstream: LocalUpstream;
  marketClock: MarketClock | null;
  /** Listings its site data holds. */
  listings: number;
}

/**
 * Starts the local upstream over `siteData` (built from `config.sharedDataDir` when not given), with the
 * configured faults, result cap and admin port, and a market clock when `MARKET_CLOCK` is on (real time) or
 * `manualMarketClock` is set (moves only when advanced, through the admin's `POST /market/advance` too).
 * What `serve` starts when no `UPSTREAM_URL` is set, and what `nyc-listings upstream` runs alone.
 * @throws Error when the shared data is missing or a port is taken.
 */
export async function startLocalSite(
  config: Config,
  options: {
    clock?: () => Date;
    siteData?: SiteData;
    manualMarketClock?: boolean;
    recordQueries?: boolean;
    port?: number;
    adminPort?: number;
  } = {},
): Promise<LocalSite> {
  const clock = options.clock ?? (() => new Date());
  const siteData = options.siteData ?? buildSiteData(config.sharedDataDir, clock());
  const market = new LocalMarket(siteData, clock);
  const marketClock =
    options.manualMarketClock || config.marketClock
      ? new MarketClock(market, { seed: config.marketSeed, start: clock(), realTime: !options.manualMarketClock })
      : null;
  const upstream = await startLocalUpstream(market, {
    port: options.port,
    adminPort: options.adminPort ?? config.localUpstreamAdminPort,
    faults: parseFaults(config.localUpstreamFaults),
    behaviour: { resultCap: config.localUpstreamResultCap },
    advanceMarket: marketClock ? (hours) => marketClock.advance(hours * 3_600_000) : undefined,
    beforeRequest: marketClock ? () => marketClock.catchUp() : undefined,
    recordQueries: options.recordQueries,
  });
  return { upstream, marketClock, listings: siteData.listings.length };
}
