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
    expect(config.upstreamResultCap).toBe(1000);
    expect(config.upstreamHeaders['apollographql-client-name']).toBe('srp-frontend-service');
    expect(config.freshness.searchSeconds).toBe(3600);
    expect(config.syncIntervalSeconds).toBe(3240);
    expect(config.apiKeyPrefix).toBe('SERVICE');
  });

  it("a real upstream URL paces crawls as the site's public clients do: one request at a time, a second apart", () => {
    const config = loadConfig({ UPSTREAM_URL: 'http://127.0.0.1:9999/' });
    expect(config.upstreamConcurrency).toBe(1);
    expect(config.upstreamPacingSeconds).toBe(1);
    expect(config.upstreamBlockBackoffSeconds).toBe(1800);
  });

  it('UPSTREAM_HEADERS adds to and replaces the site headers; anything but a JSON object of strings is refused', () => {
    const config = loadConfig({ UPSTREAM_HEADERS: '{"User-Agent":"test-agent","x-extra":"1"}' });
    expect(config.upstreamHeaders).toMatchObject({ 'user-agent': 'test-agent', 'x-extra': '1', os: 'web' });
    expect(() => loadConfig({ UPSTREAM_HEADERS: '[1]' })).toThrow(ConfigError);
    expect(() => loadConfig({ UPSTREAM_HEADERS: '{"a":1}' })).toThrow(ConfigError);
    expect(() => loadConfig({ UPSTREAM_HEADERS: 'nope' })).toThrow(ConfigError);
  });

  it('rejects malformed values', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_PRO_PER_MINUTE: '0' })).toThrow(/RATE_LIMIT_PRO_PER_MINUTE/);
    expect(() => loadConfig({ TRUST_PROXY: 'perhaps' })).toThrow(/TRUST_PROXY/);
  });
});
