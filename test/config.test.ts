import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('defaults: plans, freshness in seconds, embedded SQLite, local upstream', () => {
    const config = loadConfig({});
    expect(config.plans).toEqual({
      free: { maxPerPage: 10, perMinute: 10, perMonth: 100 },
      starter: { maxPerPage: 50, perMinute: 30, perMonth: 5000 },
      pro: { maxPerPage: 500, perMinute: 60, perMonth: 25000 },
      business: { maxPerPage: 500, perMinute: 120, perMonth: 100000 },
    });
    expect(config.port).toBe(8080);
    expect(config.databaseUrl).toMatch(/data\/nyc-listings\.db$/);
    expect(config.upstreamUrl).toBeNull();
    expect(config.upstreamExtendedFields).toBe(true);
    expect(config.freshness.searchSeconds).toBe(3600);
    expect(config.syncIntervalSeconds).toBe(3240);
    expect(config.apiKeyPrefix).toBe('SERVICE');
  });

  it('a real upstream URL turns the extension fields off and paces crawls', () => {
    const config = loadConfig({ UPSTREAM_URL: 'http://127.0.0.1:9999/' });
    expect(config.upstreamExtendedFields).toBe(false);
    expect(config.upstreamPacingSeconds).toBe(0.5);
  });

  it('rejects malformed values', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_PRO_PER_MINUTE: '0' })).toThrow(/RATE_LIMIT_PRO_PER_MINUTE/);
    expect(() => loadConfig({ TRUST_PROXY: 'perhaps' })).toThrow(/TRUST_PROXY/);
  });
});
