import { SETTINGS, type Setting, type SettingName } from '../settings.js';
import { PLANS, type Plan } from './plans.js';

/**
 * Readers of one environment variable each, as {@link loadConfig} uses them: the value, checked, or the setting's
 * default (SETTINGS) when unset. Each throws ConfigError on a value it cannot use, naming the variable.
 */

/** Thrown by {@link loadConfig} when an environment variable has a value it cannot use. */
export class ConfigError extends Error {}

/** The default of a setting whose default is a plain value (see SETTINGS). */
export function fallbackOf<T>(name: SettingName): T {
  return (SETTINGS[name] as Setting).default as T;
}

/** An integer setting of at least `min`, or `fallback` (its default) when unset or empty. */
export function int(env: NodeJS.ProcessEnv, name: SettingName, min = 0, fallback: number = fallbackOf(name)): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/** A number setting of at least 0, or `fallback` (its default) when unset or empty. */
export function num(env: NodeJS.ProcessEnv, name: SettingName, fallback: number = fallbackOf(name)): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new ConfigError(`${name} must be a number >= 0, got "${raw}"`);
  return value;
}

/** A boolean setting (1/true/yes/on, 0/false/no/off), or `fallback` (its default) when unset or empty. */
export function bool(env: NodeJS.ProcessEnv, name: SettingName, fallback: boolean = fallbackOf(name)): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** A comma-separated list of seconds, e.g. `0,5,300`. */
export function seconds(
  env: NodeJS.ProcessEnv,
  name: SettingName,
  fallback: number[] = [...fallbackOf<readonly number[]>(name)],
): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map((v) => Number(v.trim()));
  if (!values.length || values.some((v) => !Number.isFinite(v) || v < 0))
    throw new ConfigError(`${name} must be comma-separated seconds >= 0, got "${raw}"`);
  return values;
}

/** A plan's name, or `fallback` (its default) when unset or empty. */
export function planName(env: NodeJS.ProcessEnv, name: SettingName, fallback: Plan = fallbackOf(name)): Plan {
  const raw = env[name];
  if (!raw) return fallback;
  if (!PLANS.includes(raw as Plan)) throw new ConfigError(`${name} must be one of ${PLANS.join(', ')}, got "${raw}"`);
  return raw as Plan;
}

/** A text setting: its value, or its default when unset or empty. */
export function text(env: NodeJS.ProcessEnv, name: SettingName): string {
  return env[name] || fallbackOf<string>(name);
}

/** `UPSTREAM_HEADERS`: a JSON object of header names to values. */
export function headers(env: NodeJS.ProcessEnv): Record<string, string> {
  const raw = env.UPSTREAM_HEADERS;
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('UPSTREAM_HEADERS must be a JSON object of header names to values');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    throw new ConfigError('UPSTREAM_HEADERS must be a JSON object of header names to string values');
  }
  return Object.fromEntries(Object.entries(parsed as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]));
}

/** A comma-separated list of ids (empty when unset). */
export function ids(env: NodeJS.ProcessEnv, name: SettingName): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}
