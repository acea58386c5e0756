import type { FastifyInstance } from 'fastify';
import { registerAgentRoutes } from '../agents/routes.js';
import { openApiDocument } from '../http/openapi.js';
import { registerAccountRoutes } from '../http/routes/account.js';
import { registerAreaRoutes } from '../http/routes/areas.js';
import { registerBillingRoutes } from '../http/routes/billing.js';
import { registerBuildingRoutes } from '../http/routes/building.js';
import { registerChangesRoutes } from '../http/routes/changes.js';
import { registerEstimateRoutes } from '../http/routes/estimate.js';
import { registerExploreRoutes } from '../http/routes/explore.js';
import { registerHealthRoutes } from '../http/routes/health.js';
import { type OpenApiOperations, registerIndexRoutes } from '../http/routes/index.js';
import { registerMarketRoutes } from '../http/routes/market.js';
import { registerPropertyRoutes } from '../http/routes/property.js';
import { registerRecordedSalesRoutes } from '../http/routes/recorded-sales.js';
import { registerSearchRoutes } from '../http/routes/search.js';
import { registerUsageRoutes } from '../http/routes/usage.js';
import { SERVICE_VERSION } from '../version.js';
import type { AppDeps } from './app-deps.js';

/**
 * Registers every route of the service: the /v1 API, the index derived from the OpenAPI document, the agents' and
 * the map's pages, billing's pages when plans are sold, and health. Returns the OpenAPI document, built on first use
 * (every route is in it by then).
 */
export function registerRoutes(app: FastifyInstance, deps: AppDeps): () => unknown {
  registerSearchRoutes(app, { reads: deps.reads, config: deps.config });
  const billing = deps.billing;
  registerUsageRoutes(app, {
    config: deps.config,
    limiters: deps.limiters,
    quotas: deps.quotas,
    clock: deps.clock,
    subscriptionOf: async (keyId) => {
      const key = await deps.keys.findById(keyId);
      const subscription = key && billing ? await billing.subscriptionOf(key) : undefined;
      return key && subscription
        ? {
            status: key.subscription_status ?? subscription.status,
            currentPeriodEnd: subscription.current_period_end,
            cancelAt: subscription.cancel_at,
          }
        : null;
    },
  });
  registerPropertyRoutes(app, { reads: deps.reads, comparablesPlan: deps.config.featurePlans.comparables });
  registerEstimateRoutes(app, { reads: deps.reads, cityRecords: deps.cityRecords, plan: deps.config.featurePlans.estimates });
  registerBuildingRoutes(app, { reads: deps.reads, cityRecords: deps.cityRecords });
  registerRecordedSalesRoutes(app, {
    cityRecords: deps.cityRecords,
    areaTree: () => deps.reads.areaTree(),
    findListing: (id) => deps.listings.findById(id),
    config: deps.config,
    clock: deps.clock,
  });
  registerAreaRoutes(app, { reads: deps.reads });
  registerMarketRoutes(app, { reads: deps.reads, config: deps.config, clock: deps.clock });
  registerChangesRoutes(app, {
    changes: deps.changes,
    tail: deps.changeTail,
    reads: deps.reads,
    config: deps.config,
    clock: deps.clock,
    metrics: deps.metrics,
  });
  let document: unknown;
  const documentOf = () => (document ??= openApiDocument(app));
  registerIndexRoutes(app, { version: SERVICE_VERSION, document: documentOf as () => OpenApiOperations });
  registerAgentRoutes(app);
  registerExploreRoutes(app);
  if (billing) {
    registerBillingRoutes(app, { billing, config: deps.config });
    registerAccountRoutes(app, { billing, keys: deps.keys, quotas: deps.quotas, config: deps.config, clock: deps.clock });
  }
  registerHealthRoutes(app, {
    scopes: deps.scopes,
    listings: deps.listings,
    upstream: deps.upstream,
    jobs: deps.jobs,
    nextRefreshAt: deps.nextRefreshAt,
  });
  return documentOf;
}
