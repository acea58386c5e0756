import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { cityDatasets } from '../dataset/city-datasets.js';
import { startLocalSite } from '../local-site.js';
import { startStripe, type StripeSetup } from '../local-stripe.js';
import type { Metrics } from '../metrics/metrics.js';
import { GraphqlUpstreamClient } from '../upstream/client.js';
import { parseFaults } from '../upstream/faults.js';
import type { MarketClock } from '../upstream/local/market-clock.js';
import type { LocalUpstream } from '../upstream/local/server.js';
import { startLocalSoda, type LocalSoda } from '../upstream/local-soda/server.js';
import { SodaClient } from '../upstream/soda-client.js';
import type { RuntimeOptions } from './options.js';

/** The two upstreams' clients, with the local emulators started where no URL is set. */
export interface Upstreams {
  /** The local listings site (null with `UPSTREAM_URL` set), and its market clock. */
  upstream: LocalUpstream | null;
  marketClock: MarketClock | null;
  client: GraphqlUpstreamClient;
  /** The local SODA emulator (null with `OPEN_DATA_URL` set). */
  soda: LocalSoda | null;
  sodaClient: SodaClient;
  /** Stops the local emulators. */
  close: () => Promise<void>;
}

/**
 * The listings site's client and NYC Open Data's, each against its URL, or against a local emulator started on
 * loopback when none is set (the site's from the site data, SODA's from the shared data).
 * @throws Error when an emulator cannot start (one already started is stopped first).
 */
export async function startUpstreams(
  config: Config,
  options: RuntimeOptions,
  deps: { clock: () => Date; logger: Logger; metrics: Metrics },
): Promise<Upstreams> {
  const { clock, logger, metrics } = deps;
  let upstream: LocalUpstream | null = null;
  let marketClock: MarketClock | null = null;
  let soda: LocalSoda | null = null;
  const close = async () => {
    await upstream?.close();
    await soda?.close();
  };
  try {
    if (!config.upstreamUrl) {
      const site = await startLocalSite(config, {
        clock,
        siteData: options.siteData,
        manualMarketClock: options.manualMarketClock,
        recordQueries: options.recordUpstreamQueries,
      });
      ({ upstream, marketClock } = site);
      logger.info(
        { url: site.upstream.url, admin: site.upstream.adminUrl, listings: site.listings, marketClock: !!marketClock },
        'local upstream started',
      );
    }
    if (!config.openData.url) {
      soda = await startLocalSoda(options.openDataRows ?? cityDatasets(config.sharedDataDir), {
        faults: parseFaults(config.localSodaFaults),
      });
    }
  } catch (error) {
    await close();
    throw error;
  }
  const client = new GraphqlUpstreamClient({
    url: config.upstreamUrl ?? upstream!.url,
    timeoutSeconds: config.upstreamTimeoutSeconds,
    headers: config.upstreamHeaders,
    blockBackoffSeconds: config.upstreamBlockBackoffSeconds,
    concurrency: config.upstreamConcurrency,
    pacingSeconds: config.upstreamPacingSeconds,
    maxAttempts: config.upstreamMaxAttempts,
    breakerThreshold: config.upstreamBreakerThreshold,
    breakerHalfOpenSeconds: config.upstreamBreakerHalfOpenSeconds,
    maxQueued: config.upstreamMaxQueued,
    logger,
    metrics,
  });
  const sodaClient = new SodaClient({
    url: config.openData.url ?? soda!.url,
    appToken: config.openData.appToken,
    timeoutSeconds: config.upstreamTimeoutSeconds * 4,
    maxAttempts: config.upstreamMaxAttempts,
    breakerThreshold: config.upstreamBreakerThreshold,
    breakerHalfOpenSeconds: config.upstreamBreakerHalfOpenSeconds,
    logger,
    metrics,
  });
  return { upstream, marketClock, client, soda, sodaClient, close };
}

/** Stripe as the service sells through it ({@link StripeSetup}), and how its emulator stops. */
export type StripePart = StripeSetup & { stop: () => Promise<void> };

/**
 * Stripe for selling plans: the real API with `STRIPE_SECRET_KEY`, else the local emulator started on loopback;
 * none when `options.billing` is false (the one-shot commands and the worker serve no pages).
 * @throws Error when the emulator cannot start.
 */
export async function startStripePart(
  config: Config,
  options: RuntimeOptions,
  deps: { clock: () => Date; logger: Logger },
): Promise<StripePart> {
  if (!(options.billing ?? true)) return { config, provider: null, emulator: null, stop: async () => undefined };
  const setup = await startStripe(config, {
    apiOnly: options.apiOnly,
    clock: deps.clock,
    logger: deps.logger,
    emulator: options.localStripe,
  });
  return { ...setup, stop: async () => await setup.emulator?.close() };
}
