/**
 * Areas of New York City as the API shows them (spec 2.7), and the rules that DESIGN.md fixes for
 * their levels and slugs. Ids are the API's: boroughs 100 Manhattan, 200 Brooklyn, 300 Queens,
 * 400 Bronx, 500 Staten Island; every other id is the upstream site's own.
 */
export interface Area {
  id: number;
  name: string;
  /** 0 borough, 1 sub-borough (any non-borough area that has children), 2 neighbourhood. */
  level: 0 | 1 | 2;
  /** Parent area id; null for a borough (its parent, "New York", is not an NYC area). */
  parentId: number | null;
  slug: string;
  /** The area's outline as the site gives it: a Google encoded polyline (latitude first, 5 decimals); null when unknown. */
  outline: string | null;
}

/** An area row before levels: `{id, name, parentId}` in the API's ids, with the site's slug and outline when known. */
export interface AreaRow {
  id: number;
  name: string;
  parentId: number | null;
  slug?: string;
  outline?: string | null;
}

/** The five boroughs by the API's ids (spec 2.7). */
export const BOROUGHS: Readonly<Record<number, string>> = {
  100: 'Manhattan',
  200: 'Brooklyn',
  300: 'Queens',
  400: 'Bronx',
  500: 'Staten Island',
};
export const BOROUGH_IDS = [100, 200, 300, 400, 500] as const;

/** Lower-case name, apostrophes and dots dropped, any other run of non-alphanumerics to `-`. */
export function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/['’.]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * Keeps the rows that lie under one of the five boroughs (walking `parentId`, never guessing from
 * id digits) and gives each its level and slug: the site's own slug when the row has one, else one made
 * from the name (a made-up slug two areas would share gets `-<borough slug>` appended to each).
 * Boroughs get `parentId: null`.
 */
export function buildAreas(rows: AreaRow[]): Area[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const boroughOf = (id: number): number | null => {
    const seen = new Set<number>();
    let current: AreaRow | undefined = byId.get(id);
    while (current && !seen.has(current.id)) {
      if (current.id in BOROUGHS) return current.id;
      seen.add(current.id);
      current = current.parentId === null ? undefined : byId.get(current.parentId);
    }
    return null;
  };
  const nyc = rows.filter((r) => boroughOf(r.id) !== null);
  const hasChildren = new Set(nyc.map((r) => r.parentId));
  const slugCount = new Map<string, number>();
  for (const r of nyc) slugCount.set(slugify(r.name), (slugCount.get(slugify(r.name)) ?? 0) + 1);
  return nyc
    .map((r): Area => {
      const isBorough = r.id in BOROUGHS;
      const base = slugify(r.name);
      const borough = boroughOf(r.id)!;
      return {
        id: r.id,
        name: r.name,
        level: isBorough ? 0 : hasChildren.has(r.id) ? 1 : 2,
        parentId: isBorough ? null : r.parentId,
        slug: r.slug ?? (!isBorough && slugCount.get(base)! > 1 ? `${base}-${slugify(BOROUGHS[borough])}` : base),
        outline: r.outline ?? null,
      };
    })
    .sort((a, b) => a.id - b.id);
}

/** A name folded for matching: lower case, accents removed (`Óvalo` -> `ovalo`), spaces collapsed. */
export function foldName(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/** Read-only index over the area list: descendants, borough of an area, lookup by name. */
export class AreaTree {
  private readonly byId: Map<number, Area>;
  private readonly children = new Map<number, number[]>();
  private readonly byName = new Map<string, Area[]>();
  private readonly bySlug = new Map<string, Area>();
  private readonly descendants = new Map<number, readonly number[]>();

  constructor(readonly areas: Area[]) {
    this.byId = new Map(areas.map((a) => [a.id, a]));
    for (const a of areas) {
      if (a.parentId !== null) this.children.set(a.parentId, [...(this.children.get(a.parentId) ?? []), a.id]);
      this.byName.set(a.name.toLowerCase(), [...(this.byName.get(a.name.toLowerCase()) ?? []), a]);
      this.bySlug.set(a.slug, a);
    }
  }

  /** The area a token of `areas=` names: a numeric id, or a slug (case-insensitive); undefined when none. */
  find(token: string): Area | undefined {
    return /^[0-9]+$/.test(token) ? this.byId.get(Number(token)) : this.bySlug.get(token.toLowerCase());
  }

  /** Every slug, for suggestions. */
  slugs(): string[] {
    return [...this.bySlug.keys()];
  }

  /**
   * Areas whose name starts with `prefix`, or has a word that does, ignoring case and accents (`bush` finds
   * Bushwick, `side` Upper West Side); whole-name matches first, then by name and id.
   */
  searchByName(prefix: string): Area[] {
    const q = foldName(prefix);
    if (!q) return [];
    const hits = this.areas
      .map((a) => ({ a, name: foldName(a.name) }))
      .filter(({ name }) => name.startsWith(q) || name.split(/[\s-]+/).some((w) => w.startsWith(q)))
      .sort((x, y) => Number(!x.name.startsWith(q)) - Number(!y.name.startsWith(q)) || x.name.localeCompare(y.name) || x.a.id - y.a.id);
    return hits.map(({ a }) => a);
  }

  get(id: number): Area | undefined {
    return this.byId.get(id);
  }

  /**
   * The area with this name (case-insensitive). Names repeat across boroughs (Chelsea, Murray Hill):
   * with `boroughId`, the one in that borough; without, the first by id.
   */
  findByName(name: string, boroughId?: number): Area | undefined {
    const all = this.byName.get(name.toLowerCase()) ?? [];
    return boroughId === undefined ? all[0] : all.find((a) => this.boroughOf(a.id) === boroughId);
  }

  /** `id` and every area below it. */
  withDescendants(id: number): readonly number[] {
    // Worked out once an area: every search naming areas asks, and the tree does not change.
    const known = this.descendants.get(id);
    if (known) return known;
    const found = new Set<number>();
    const stack = [id];
    while (stack.length) {
      const next = stack.pop()!;
      if (found.has(next)) continue;
      found.add(next);
      stack.push(...(this.children.get(next) ?? []));
    }
    const out = [...found];
    this.descendants.set(id, out);
    return out;
  }

  /** Borough id (100-500) an area lies in, or null for an unknown id. */
  boroughOf(id: number): number | null {
    let current = this.byId.get(id);
    while (current) {
      if (current.level === 0) return current.id;
      current = current.parentId === null ? undefined : this.byId.get(current.parentId);
    }
    return null;
  }

  /** The chain from the borough down to `id`, inclusive. */
  ancestry(id: number): Area[] {
    const chain: Area[] = [];
    let current = this.byId.get(id);
    while (current && !chain.includes(current)) {
      chain.unshift(current);
      current = current.parentId === null ? undefined : this.byId.get(current.parentId);
    }
    return chain;
  }
}
