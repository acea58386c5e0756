import type { Logger } from 'pino';
import type { Config } from './config.js';
import { StripeProvider } from './billing/stripe-provider.js';
import { startLocalStripe, type LocalStripe, type LocalStripeOptions } from './upstream/local-stripe/server.js';

/** The subscription provider as configured, and the local emulator when one was started. */
export interface StripeSetup {
  /** The configuration with the emulator's key, webhook secret, address and prices filled in where unset. */
  config: Config;
  provider: StripeProvider | null;
  emulator: LocalStripe | null;
}

/**
 * Stripe as configured (docs/billing.md): with `STRIPE_SECRET_KEY`, Stripe itself (or `STRIPE_API_URL`); without, the
 * local Stripe emulator started on loopback, whose key, webhook secret, address and catalogue's prices stand for the
 * unset settings. An API-only instance starts no emulator: without `STRIPE_SECRET_KEY` it sells nothing (provider null).
 * @throws Error when the emulator cannot start
 */
export async function startStripe(
  config: Config,
  options: { apiOnly?: boolean; clock: () => Date; logger: Logger; emulator?: Partial<LocalStripeOptions> },
): Promise<StripeSetup> {
  const stripe = config.billing.stripe;
  let emulator: LocalStripe | null = null;
  let effective = config;
  if (!stripe.secretKey) {
    if (options.apiOnly) return { config, provider: null, emulator: null };
    emulator = await startLocalStripe({
      port: config.billing.localStripePort,
      stateFile: config.billing.localStripeStateFile,
      ...options.emulator,
    });
    const unset = Object.values(stripe.prices).every((ids) => ids.length === 0);
    effective = {
      ...config,
      billing: {
        ...config.billing,
        stripe: {
          secretKey: emulator.secretKey,
          webhookSecret: stripe.webhookSecret ?? emulator.webhookSecret,
          apiUrl: emulator.url,
          prices: unset ? emulator.planPrices : stripe.prices,
        },
      },
    };
    options.logger.info({ url: emulator.url }, 'local Stripe emulator started (STRIPE_SECRET_KEY unset): test mode, nothing is charged');
  } else if (!stripe.webhookSecret) {
    options.logger.warn('STRIPE_WEBHOOK_SECRET is unset: no Stripe event can be verified, and every one is refused');
  }
  const s = effective.billing.stripe;
  const provider = new StripeProvider({ secretKey: s.secretKey!, webhookSecret: s.webhookSecret, apiUrl: s.apiUrl, clock: options.clock });
  return { config: effective, provider, emulator };
}
