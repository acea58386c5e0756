import { type Static, Type } from 'typebox';
import { Nullable } from '../wire/common.js';

/**
 * The most listings written since a build that are held as a delta (docs/search-index.md): past it the rows written are
 * not read, the store answers, and the index is built again. A delta reads the rows written and builds their
 * columns on the event loop, and every search then runs on both sets.
 */
export const DELTA_LIMIT = 20_000;

/** Listings written since a build past which a new build starts in the background, while the index with its delta answers. */
export const REBUILD_AFTER = 2_000;

/** The index's state, as `/v1/health` shows it (`searchIndex`) and the metrics read it. */
export const SearchIndexStateSchema = Type.Object({
  enabled: Type.Boolean({ description: 'Whether searches are answered from the in-memory index on this instance (SEARCH_INDEX).' }),
  listings: Nullable(
    Type.Object(
      { rental: Type.Integer(), sale: Type.Integer() },
      { description: 'Active listings the index holds, by kind; null until its first build.' },
    ),
  ),
  dataVersion: Nullable(
    Type.Integer({
      description:
        "The store's data version the index holds: while it is the store's, the index answers; otherwise the store does, and a build runs.",
    }),
  ),
  building: Type.Boolean({ description: 'Whether a build is under way on this instance.' }),
  deltaListings: Type.Integer({
    description: `Listings written since the last build, read alone and held as its delta (their row versions); past ${REBUILD_AFTER.toLocaleString('en')} a build starts, past ${DELTA_LIMIT.toLocaleString('en')} the store answers until it is done.`,
  }),
  builtAt: Nullable(Type.String({ description: 'When the last build finished (UTC).' })),
  buildSeconds: Nullable(Type.Number({ description: 'How long the last build took, reading the store included (seconds).' })),
  builds: Type.Integer({ description: 'Builds finished on this instance since it started.' }),
  failedBuilds: Type.Integer({ description: 'Builds that failed on this instance since it started (the store answered meanwhile).' }),
  lastError: Nullable(Type.String({ description: "The last failed build's cause." })),
  lastErrorAt: Nullable(Type.String({ description: 'When it failed (UTC).' })),
});
export type SearchIndexState = Static<typeof SearchIndexStateSchema>;

/** The state shown when SEARCH_INDEX is off: the store answers every search. */
export const NO_SEARCH_INDEX: SearchIndexState = {
  enabled: false,
  listings: null,
  dataVersion: null,
  building: false,
  deltaListings: 0,
  builtAt: null,
  buildSeconds: null,
  builds: 0,
  failedBuilds: 0,
  lastError: null,
  lastErrorAt: null,
};
