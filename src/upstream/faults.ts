/**
 * Faults the local emulators (the listings site's and SODA's) can inject, for tests, benchmarks and the fault
 * matrix. Only the emulators read them: the real clients never know about them.
 */

/** Which requests a fault applies to: every one, the detail batches (listings and buildings), or the searches. */
export const FAULT_TARGETS = ['all', 'details', 'search'] as const;
export type FaultTarget = (typeof FAULT_TARGETS)[number];

/**
 * Faults the local upstream can inject, for tests and benchmarks. Each rate is the share (0-1) of the requests
 * `on` names that meet that fault: a 503, a 403 bot block, a malformed body, an answer never sent (`hang`), a
 * GraphQL error on HTTP 200 (`graphqlError`), a connection reset before any answer (`reset`), or an answer held
 * `stallMs` milliseconds and then sent (`stall`). `latencyMs` is added to every request; `failAfter` above 0
 * makes every request after that many answer 503 (an upstream dying mid-crawl). The real client never knows
 * about them: they are the emulator's only, set by `LOCAL_UPSTREAM_FAULTS` or the admin port's `PUT /faults`.
 */
export interface Faults {
  latencyMs: number;
  errorRate: number;
  blockRate: number;
  malformedRate: number;
  hangRate: number;
  graphqlErrorRate: number;
  resetRate: number;
  stallRate: number;
  stallMs: number;
  failAfter: number;
  on: FaultTarget;
}

export const NO_FAULTS: Faults = {
  latencyMs: 0,
  errorRate: 0,
  blockRate: 0,
  malformedRate: 0,
  hangRate: 0,
  graphqlErrorRate: 0,
  resetRate: 0,
  stallRate: 0,
  stallMs: 20_000,
  failAfter: 0,
  on: 'all',
};

/**
 * Parses fault settings such as `errorRate=0.05,stallRate=0.02,stallMs=20000,on=details` (the
 * `LOCAL_UPSTREAM_FAULTS` variable).
 * @throws Error on an unknown name, a value that is not a non-negative number (rates at most 1), or an
 * unknown target.
 */
export function parseFaults(text: string): Partial<Faults> {
  const out: Partial<Faults> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, raw] = part.split('=');
    if (!(name in NO_FAULTS)) throw new Error(`unknown fault "${name}" (known: ${Object.keys(NO_FAULTS).join(', ')})`);
    if (name === 'on') {
      if (!FAULT_TARGETS.includes(raw as FaultTarget))
        throw new Error(`bad value for fault on: "${raw}" (known: ${FAULT_TARGETS.join(', ')})`);
      out.on = raw as FaultTarget;
      continue;
    }
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || (name.endsWith('Rate') && value > 1))
      throw new Error(`bad value for fault ${name}: "${raw}"`);
    (out as Record<string, number>)[name] = value;
  }
  return out;
}

/** The fault a request meets, by one roll over the stacked rates; null for none (most requests). */
export type FaultKind = 'hang' | 'block' | 'error' | 'malformed' | 'graphqlError' | 'reset' | 'stall';

/** Draws the fault one request meets under `faults` (rates stacked in a fixed order, so at most one). */
export function rollFault(faults: Faults, random: () => number = Math.random): FaultKind | null {
  let roll = random();
  const rates: [FaultKind, number][] = [
    ['hang', faults.hangRate],
    ['block', faults.blockRate],
    ['error', faults.errorRate],
    ['malformed', faults.malformedRate],
    ['graphqlError', faults.graphqlErrorRate],
    ['reset', faults.resetRate],
    ['stall', faults.stallRate],
  ];
  for (const [kind, rate] of rates) {
    if (roll < rate) return kind;
    roll -= rate;
  }
  return null;
}

/** Waits that many milliseconds, or until `release` is called (an emulator closing lets its stalled answers go). */
export function holdable(ms: number, held: Set<() => void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      held.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    held.add(done);
  });
}
