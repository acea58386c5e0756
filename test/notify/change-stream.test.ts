import { describe, expect, it } from 'vitest';
import { feedSince, get } from '../helpers/http.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';
import { openStream, type OpenStream } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';
import { EventSource } from 'eventsource';
import { createLogger } from '../../src/app.js';
import { CHANGE_TYPES } from '../../src/domain/change.js';

// GET /v1/changes/stream over real HTTP on loopback, read by an independent SSE parser, against the
// feed (GET /v1/changes) of the same mirror after a market day and a sync.
const runtime = useRuntimesPerTest({ withoutRentHop: true });
const DAY = 24 * 3_600_000;

describe('the change stream', () => {
  it("sends the feed's events, resumes from Last-Event-ID without loss or repeat, then goes on live with heartbeats", async () => {
    let now = Date.now();
    const rt = await runtime(
      { CHANGES_STREAM_HEARTBEAT_SECONDS: '0.3', CHANGES_STREAM_POLL_SECONDS: '0.05' },
      { clock: () => new Date(now), manualMarketClock: true },
    );
    const key = await rt.key('business');
    const base = await rt.app.listen({ port: 0, host: '127.0.0.1' });
    const auth = { authorization: `Bearer ${key}` };
    const start = await rt.changes.latestId();
    rt.marketClock!.advance(DAY);
    now += DAY;
    await rt.syncer.syncScope('rental', 100);
    const expected = await feedSince(rt.app, key, start);
    expect(expected.length).toBeGreaterThan(20);

    // Part of the backlog, then the connection drops.
    const first = await openStream(`${base}/v1/changes/stream?since=${start}`, auth);
    expect(first.status).toBe(200);
    expect(String(first.headers['content-type'])).toMatch(/^text\/event-stream/);
    expect(first.headers['x-request-id']).toBeTruthy();
    const half = Math.floor(expected.length / 2);
    await waitFor(() => first.events.length >= half, 'half the backlog on the first connection');
    first.close();
    const received = first.events.slice(0, half);

    // A client reconnecting sends the last id it saw.
    const second = await openStream(`${base}/v1/changes/stream`, { ...auth, 'last-event-id': received.at(-1)!.id! });
    await waitFor(() => second.events.length >= expected.length - half, 'the rest of the backlog on the second connection');
    const all = [...received, ...second.events];
    expect(all.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(all.map((e) => e.event)).toEqual(expected.map((e) => e.type));
    expect(all.map((e) => JSON.parse(e.data))).toEqual(expected);

    // Idle: heartbeats. Then live: a sync's events arrive on the open stream, each once.
    await waitFor(() => second.comments.some((c) => c.startsWith(' heartbeat') || c.startsWith('heartbeat')), 'a heartbeat while idle');
    const head = await rt.changes.latestId();
    rt.marketClock!.advance(DAY);
    now += DAY;
    await rt.syncer.syncScope('sale', 100);
    const live = await feedSince(rt.app, key, head);
    expect(live.length).toBeGreaterThan(0);
    await waitFor(() => second.events.length >= expected.length - half + live.length, 'the live events');
    expect(second.events.slice(expected.length - half).map((e) => e.id)).toEqual(live.map((e) => e.id));
    second.close();
    console.log(
      `stream: ${expected.length} backlog events over two connections (resumed after ${received.at(-1)!.id}), then ${live.length} live; ${second.comments.length} heartbeats`,
    );
  }, 120_000);

  it("a browser's EventSource opens it with ?access_token= (RFC 6750, 2.3): the same events, no-store, the key in no log line, and nowhere else", async () => {
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
    let now = Date.now();
    const rt = await runtime({ CHANGES_STREAM_POLL_SECONDS: '0.05' }, { clock: () => new Date(now), manualMarketClock: true, logger });
    const key = await rt.key('business');
    const base = await rt.app.listen({ port: 0, host: '127.0.0.1' });
    const start = await rt.changes.latestId();
    rt.marketClock!.advance(DAY);
    now += DAY;
    await rt.syncer.syncScope('rental', 100);
    const expected = await feedSince(rt.app, key, start);
    expect(expected.length).toBeGreaterThan(5);

    const source = new EventSource(`${base}/v1/changes/stream?since=${start}&access_token=${key}`);
    const received: { id: string; type: string }[] = [];
    for (const type of CHANGE_TYPES) source.addEventListener(type, (e) => received.push({ id: e.lastEventId, type }));
    await waitFor(() => received.length >= expected.length, 'every event through EventSource');
    source.close();
    expect(received).toEqual(expected.map((e) => ({ id: e.id, type: e.type })));

    const raw = await openStream(`${base}/v1/changes/stream?access_token=${key}`, {});
    expect(raw.status).toBe(200);
    expect(raw.headers['cache-control']).toBe('no-store');
    raw.close();
    expect((await get(rt.app, `/v1/changes/stream?access_token=${key.slice(0, -4)}0000`)).status).toBe(401);
    const both = await rt.app.inject({ url: `/v1/changes/stream?access_token=${key}`, headers: { authorization: `Bearer ${key}` } });
    expect(both.statusCode).toBe(400);
    expect(both.json().errors[0].name).toBe('access_token');
    // Only the stream takes the key in its URL: elsewhere it is an unknown parameter.
    expect((await get(rt.app, `/v1/changes?since=0&access_token=${key}`)).status).toBe(401);
    expect((await get(rt.app, `/v1/changes?since=0&access_token=${key}`, key)).status).toBe(400);
    expect((await get(rt.app, `/v1/search/rentals?access_token=${key}`)).status).toBe(400);
    await waitFor(() => lines.some((l) => l.includes('access_token=[redacted]')), 'a logged request with its token redacted');
    expect(lines.join('\n')).not.toContain(key);
  }, 120_000);

  it('filters as the feed does (kind, areas, price, beds, types)', async () => {
    let now = Date.now();
    const rt = await runtime({ CHANGES_STREAM_POLL_SECONDS: '0.05' }, { clock: () => new Date(now), manualMarketClock: true });
    const key = await rt.key('business');
    const base = await rt.app.listen({ port: 0, host: '127.0.0.1' });
    const start = await rt.changes.latestId();
    rt.marketClock!.advance(DAY);
    now += DAY;
    await rt.syncer.syncScope('rental', 200);
    await rt.syncer.syncScope('rental', 100);
    const all = await feedSince(rt.app, key, start);
    // Brooklyn (200) rentals of $2,500 to $4,000 with at most one bedroom, price changes and status changes.
    const brooklyn = new Set(
      (await rt.store.db.selectFrom('listings').select('id').where('borough_id', '=', 200).execute()).map((r) => r.id),
    );
    const want = all.filter(
      (e) =>
        e.kind === 'rental' &&
        brooklyn.has(e.listingId) &&
        e.newPrice >= 2500 &&
        e.newPrice <= 4000 &&
        e.listing.bedroomCount !== null &&
        e.listing.bedroomCount <= 1 &&
        e.type !== 'listing.listed',
    );
    expect(want.length).toBeGreaterThan(0);
    const filter = '&kind=rental&areas=200&minPrice=2500&maxPrice=4000&maxBeds=1&types=listing.price_changed,listing.status_changed';
    expect((await feedSince(rt.app, key, start, filter)).map((e) => e.id)).toEqual(want.map((e) => e.id));
    const stream = await openStream(`${base}/v1/changes/stream?since=${start}${filter}`, { authorization: `Bearer ${key}` });
    await waitFor(() => stream.events.length >= want.length, 'the filtered events');
    const tail = await rt.changes.latestId();
    // Nothing beyond them: the log's head is past every event, and the stream sends no more.
    await waitFor(async () => (await get(rt.app, `/v1/changes?since=${tail}`, key)).body.data.length === 0, 'the log read to its head');
    expect(stream.events.map((e) => e.id)).toEqual(want.map((e) => e.id));
    stream.close();
  }, 120_000);

  it('refuses what it must: a lower plan, a bad cursor, an unknown area, too many open streams', async () => {
    const rt = await runtime({ CHANGES_STREAM_MAX_PER_KEY: '2' });
    const base = await rt.app.listen({ port: 0, host: '127.0.0.1' });
    const business = { authorization: `Bearer ${await rt.key('business')}` };
    const refused = async (path: string, headers: Record<string, string>, status: number, code: string) => {
      const s = await openStream(`${base}${path}`, headers);
      expect(s.status).toBe(status);
      expect(String(s.headers['content-type'])).toMatch(/^application\/problem\+json/);
      expect(s.problem.code).toBe(code);
    };
    await refused('/v1/changes/stream', {}, 401, 'MISSING_API_KEY');
    await refused('/v1/changes/stream', { authorization: `Bearer ${await rt.key('pro')}` }, 403, 'PLAN_REQUIRED');
    await refused('/v1/changes/stream', { ...business, 'last-event-id': 'abc' }, 400, 'INVALID_PARAMS');
    await refused('/v1/changes/stream?areas=999999', business, 400, 'INVALID_PARAMS');
    await refused('/v1/changes/stream?minBeds=-1', business, 400, 'INVALID_PARAMS');
    const held: OpenStream[] = [
      await openStream(`${base}/v1/changes/stream`, business),
      await openStream(`${base}/v1/changes/stream`, business),
    ];
    expect(held.map((s) => s.status)).toEqual([200, 200]);
    await refused('/v1/changes/stream', business, 429, 'RATE_LIMIT_EXCEEDED');
    held[0].close();
    // The stream's place frees when the client goes away.
    await waitFor(async () => {
      const s = await openStream(`${base}/v1/changes/stream`, business);
      if (s.status === 200) held.push(s);
      return s.status === 200;
    }, 'a stream freed by a closed connection');
    for (const s of held) s.close();
  }, 60_000);
});
