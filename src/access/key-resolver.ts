import { LRUCache } from 'lru-cache';
import { digestsEqual } from '../domain/api-key.js';
import type { ApiKeyRow, KeysRepository } from '../store/keys-repository.js';

/** Keys remembered at once (known and unknown digests together). */
const MAX_ENTRIES = 50_000;

/**
 * API keys by digest, from an in-memory cache in front of the keys table: a request with a known key
 * costs no database read. An entry lives `keyCacheSeconds` (KEY_CACHE_SECONDS), which bounds how long a key revoked (or issued,
 * changed, imported) by the command line, or by another instance, takes to be seen here; unknown
 * digests are remembered as well, so guessing keys does not reach the database each time.
 */
export class KeyResolver {
  private readonly cache: LRUCache<string, { row: ApiKeyRow | null }>;

  constructor(
    private readonly keys: KeysRepository,
    keyCacheSeconds: number,
  ) {
    this.cache = new LRUCache({ max: MAX_ENTRIES, ttl: Math.max(1, keyCacheSeconds * 1000), ttlAutopurge: false });
    // A change made in this process is seen at once; one made elsewhere within the time to live.
    keys.onChange(() => this.cache.clear());
  }

  /**
   * The stored key with this digest, or undefined (unknown). Revoked and expired keys are returned as stored. The row
   * read is checked to hold this very digest (compared in constant time) before it is kept.
   */
  async find(digest: string): Promise<ApiKeyRow | undefined> {
    const hit = this.cache.get(digest);
    if (hit) return hit.row ?? undefined;
    const read = await this.keys.findByDigest(digest);
    const row = read && digestsEqual(read.digest, digest) ? read : undefined;
    this.cache.set(digest, { row: row ?? null });
    return row;
  }

  /** Forgets every key held (another instance changed keys: access/key-changes.ts). */
  clear(): void {
    this.cache.clear();
  }

  /** What {@link find} would answer without reading the store: the row, null for a digest known to be unknown, undefined when not held. */
  known(digest: string): ApiKeyRow | null | undefined {
    return this.cache.get(digest)?.row;
  }
}
