// The map explorer (docs/explorer.md): a page of the service that calls only the service's own /v1 API, on its own
// origin. The filter panel is built from the OpenAPI document's search parameters, so that each control is one
// query parameter, with the schema's own bounds and choices; the page's address carries the same parameters.
/* global maplibregl */

const KEY_STORAGE = 'nyc-listings.publishable-key';
/** The search parameters the panel shows, in order (each one a control, when the kind's search takes it). */
const PANEL_PARAMETERS = [
  'areas',
  'minPrice',
  'maxPrice',
  'minBeds',
  'maxBeds',
  'amenities',
  'noFee',
  'petsAllowed',
  'maxPricePosition',
  'sort',
  'sortDir',
];
/** The listing kinds: the search path's last part, and the kind the market and change stream name. */
const KINDS = { rentals: 'rental', sales: 'sale' };
/** The city's centre and a zoom that shows the five boroughs. */
const CITY_VIEW = { center: [-73.94, 40.7], zoom: 9.6 };

const state = { key: null, plan: null, spec: null, kind: 'rentals', searches: 0, stream: null, changesSeen: 0 };
const $ = (selector) => document.querySelector(selector);

/** An element with attributes and children (strings become text: nothing from an answer is parsed as HTML). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat())
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  return node;
}

/** An RFC 9457 problem the API answered, or a failure to reach it. */
class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
    this.status = status;
    this.code = problem?.code ?? null;
  }
}

/** GET a path of the API with the page's key; the parsed JSON, or an {@link ApiError}. */
async function api(path) {
  const response = await fetch(path, { headers: state.key ? { authorization: `Bearer ${state.key}` } : {} });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

const dollars = (value) => (value === null || value === undefined ? '–' : `$${Math.round(value).toLocaleString('en-US')}`);
const orDash = (value) => (value === null || value === undefined ? '–' : String(value));

function setStatus(text, isError = false) {
  const status = $('#status');
  status.textContent = text;
  status.classList.toggle('error', isError);
}

/** The key: from the address's fragment (never sent to a server; then kept in this browser), else the one kept. */
function readKey() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const given = fragment.get('key');
  if (given) {
    localStorage.setItem(KEY_STORAGE, given);
    fragment.delete('key');
    history.replaceState(null, '', `${location.pathname}${location.search}${fragment.size ? `#${fragment}` : ''}`);
  }
  return localStorage.getItem(KEY_STORAGE);
}

/** The choices of a comma-separated list parameter, read from its pattern `^(A|B)(,(A|B))*$`. */
function listChoices(schema) {
  const match = /^\^\(([A-Z0-9_|]+)\)\(,\(\1\)\)\*\$$/.exec(schema.pattern ?? '');
  return match ? match[1].split('|') : null;
}

/** One control of the filter panel for a search parameter of the OpenAPI document. */
function control(parameter, value) {
  const { name, schema, description } = parameter;
  const id = `param-${name}`;
  const label = el('label', { for: id, title: description }, name);
  const choices = listChoices(schema);
  if (choices) {
    const chosen = new Set((value ?? '').split(',').filter(Boolean));
    return el(
      'fieldset',
      { 'data-param': name, title: description },
      el('legend', {}, name),
      choices.map((choice) =>
        el(
          'label',
          {},
          el('input', { type: 'checkbox', value: choice, checked: chosen.has(choice) }),
          ` ${choice.toLowerCase().replaceAll('_', ' ')}`,
        ),
      ),
    );
  }
  let input;
  if (schema.enum || schema.type === 'boolean') {
    const options = schema.enum ?? ['true', 'false'];
    input = el(
      'select',
      { id, name },
      el('option', { value: '' }, 'any'),
      options.map((option) => el('option', { value: option, selected: String(option) === value }, String(option))),
    );
  } else if (schema.type === 'integer' || schema.type === 'number') {
    input = el('input', {
      id,
      name,
      type: 'number',
      min: schema.minimum,
      max: schema.maximum,
      step: schema.type === 'integer' ? 1 : 'any',
      value: value ?? '',
    });
  } else {
    input = el('input', {
      id,
      name,
      type: 'text',
      value: value ?? '',
      list: name === 'areas' ? 'area-names' : null,
      placeholder: name === 'areas' ? 'williamsburg, upper-west-side…' : null,
    });
  }
  return el('div', { 'data-param': name }, label, input);
}

/** The kind's search parameters the panel shows, from the OpenAPI document. */
function panelParameters(kind) {
  const parameters = state.spec.paths[`/v1/search/${kind}`].get.parameters.filter((p) => p.in === 'query');
  return PANEL_PARAMETERS.map((name) => parameters.find((p) => p.name === name)).filter(Boolean);
}

/** Draws the panel for the kind, with the values of `query` (a URLSearchParams). */
function drawPanel(query) {
  $('#params').replaceChildren(...panelParameters(state.kind).map((p) => control(p, query.get(p.name))));
}

/** The panel's values as search parameters (empty controls left out). */
function panelQuery() {
  const query = new URLSearchParams();
  for (const node of $('#params').querySelectorAll('[data-param]')) {
    const name = node.dataset.param;
    const boxes = node.querySelectorAll('input[type=checkbox]');
    const value = boxes.length
      ? [...boxes]
          .filter((b) => b.checked)
          .map((b) => b.value)
          .join(',')
      : node.querySelector('input, select').value.trim();
    if (value !== '') query.set(name, value);
  }
  return query;
}

/** The map's bounds as the search's `bbox` (minLon,minLat,maxLon,maxLat), kept inside the earth's range. */
function bbox(map) {
  const b = map.getBounds();
  const clamp = (v, limit) => Math.max(-limit, Math.min(limit, v)).toFixed(6);
  return [clamp(b.getWest(), 180), clamp(b.getSouth(), 90), clamp(b.getEast(), 180), clamp(b.getNorth(), 90)].join(',');
}

/** Whether the key's plan may call the operation (its `x-min-plan` in the OpenAPI document): a refusal is not asked for. */
function allows(path) {
  const minimum = state.spec.paths[path].get['x-min-plan'];
  const plans = state.spec['x-plans'];
  return !minimum || (state.plan !== null && plans.indexOf(state.plan) >= plans.indexOf(minimum));
}

/** The key's plan (GET /v1/usage), or null when the key is refused (the refusal is shown). */
async function readPlan() {
  try {
    const { data } = await api('/v1/usage');
    $('#plan').textContent = `Plan: ${data.plan}, ${data.limits.maxPerPage} listings a page, ${data.limits.perMinute} requests a minute.`;
    return data.plan;
  } catch (error) {
    setStatus(`The key is refused: ${error.message}`, true);
    return null;
  }
}

/** Searches the listings in view with the panel's filters; draws them and lists the first ones. */
async function search(map) {
  const number = ++state.searches;
  const filters = panelQuery();
  history.replaceState(null, '', `?${new URLSearchParams([['kind', state.kind], ...filters])}${location.hash}`);
  const query = new URLSearchParams(filters);
  query.set('bbox', bbox(map));
  query.set('format', 'geojson');
  query.set('perPage', '500');
  setStatus('Searching…');
  try {
    const collection = await api(`/v1/search/${state.kind}?${query}`);
    if (number !== state.searches) return;
    const features = collection.features.filter((f) => f.geometry);
    const { total, dataAge } = collection.meta;
    // More matches than one page holds: every match drawn, counted on the map's grid, in place of the page's points.
    const cells = total > collection.features.length ? await clusters(map, filters) : null;
    if (number !== state.searches) return;
    map.getSource('listings').setData({ type: 'FeatureCollection', features: cells ? [] : features });
    map.getSource('cells').setData({ type: 'FeatureCollection', features: cells ?? [] });
    const drawn = cells
      ? `every one on the map, in ${cells.length.toLocaleString('en-US')} cells`
      : `${features.length.toLocaleString('en-US')} on the map`;
    setStatus(
      `${total.toLocaleString('en-US')} ${state.kind} match in view; ${drawn}. Data confirmed ${ageInWords(dataAge)}.` +
        (state.changesSeen ? ` ${state.changesSeen} live changes seen.` : ''),
    );
    $('#results').replaceChildren(
      ...collection.features
        .slice(0, 25)
        .map((f) =>
          el(
            'li',
            {},
            el(
              'button',
              { type: 'button', 'data-id': f.properties.id, onclick: () => openListing(f.properties.id) },
              `${dollars(f.properties.price)} · ${orDash(f.properties.bedroomCount)} bd · ${f.properties.areaName ?? ''} · ${f.properties.address?.street ?? 'address not given'}`,
            ),
          ),
        ),
    );
    document.body.dataset.state = 'ready';
    if (!state.stream && allows('/v1/changes/stream')) openStream(map);
  } catch (error) {
    if (number === state.searches) setStatus(error.message, true);
  }
}

/** The matches of the panel's `filters` in view, counted on the map's grid (GET /v1/search/{kind}/clusters), as GeoJSON points. */
async function clusters(map, filters) {
  const query = new URLSearchParams(filters);
  query.set('bbox', bbox(map));
  query.set('zoom', String(Math.max(0, Math.min(22, Math.floor(map.getZoom())))));
  const { data } = await api(`/v1/search/${state.kind}/clusters?${query}`);
  return data.map((cell) => ({
    type: 'Feature',
    geometry: { type: 'Point', coordinates: [cell.longitude, cell.latitude] },
    properties: { count: cell.count, minPrice: cell.minPrice, maxPrice: cell.maxPrice },
  }));
}

/** How long ago an instant (ISO 8601) was, in words: `just now`, `5 minutes ago`, `2 hours ago`, `3 days ago`. */
function ageInWords(instant) {
  const seconds = Math.max(0, (Date.now() - Date.parse(instant)) / 1000);
  if (seconds < 45) return 'just now';
  for (const [unit, size] of [
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
  ]) {
    const n = Math.round(seconds / size);
    if (n >= 1 && seconds >= size * 0.75) return `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  }
  return 'a minute ago';
}

/** An estimate in words: the figure, its 80 % interval, and where the asking price lies against it. */
function estimateInWords(estimate) {
  if (estimate.estimate === null) return `none: ${estimate.reason}`;
  const position = estimate.pricePosition === null ? '' : `, asking ${estimate.pricePosition > 0 ? '+' : ''}${estimate.pricePosition} %`;
  return `${dollars(estimate.estimate)} (80 %: ${dollars(estimate.low)} – ${dollars(estimate.high)}, ${estimate.confidence} confidence${position})`;
}

/** Opens a listing in the side panel: its detail, estimate, comparables and its area's market figures. */
async function openListing(id) {
  const panel = $('#listing');
  panel.hidden = false;
  panel.replaceChildren(el('p', {}, 'Loading…'));
  const close = el(
    'button',
    {
      type: 'button',
      class: 'close',
      onclick: () => {
        panel.hidden = true;
      },
      'aria-label': 'Close',
    },
    '×',
  );
  try {
    const { data: listing } = await api(`/v1/property/${encodeURIComponent(id)}`);
    const [estimate, comparables, market] = await Promise.all([
      allows('/v1/property/{id}/estimate')
        ? api(`/v1/property/${encodeURIComponent(id)}/estimate`).catch((error) => error)
        : new ApiError(403, {
            detail: `Estimates need the ${state.spec.paths['/v1/property/{id}/estimate'].get['x-min-plan']} plan or above.`,
          }),
      allows('/v1/property/{id}/comparables')
        ? api(`/v1/property/${encodeURIComponent(id)}/comparables?limit=5`).catch((error) => error)
        : new ApiError(403, {
            detail: `Comparables need the ${state.spec.paths['/v1/property/{id}/comparables'].get['x-min-plan']} plan or above.`,
          }),
      listing.areaId === null ? null : api(`/v1/market?kind=${KINDS[state.kind]}&areas=${listing.areaId}`).catch((error) => error),
    ]);
    const facts = [
      ['Price', `${dollars(listing.price)}${state.kind === 'rentals' ? ' a month' : ''}`],
      ['Estimate', estimate instanceof ApiError ? estimate.message : estimateInWords(estimate.data)],
      ['Net effective rent', listing.netEffective === null ? null : dollars(listing.netEffective)],
      ['Bedrooms', orDash(listing.bedroomCount)],
      ['Bathrooms', orDash(listing.fullBathroomCount)],
      ['Floor area', listing.sqft === null ? null : `${listing.sqft.toLocaleString('en-US')} sq ft`],
      ['Price per sq ft', listing.pricePerSqft === null ? null : `$${listing.pricePerSqft.toFixed(2)}`],
      ['Days on market', orDash(listing.daysOnMarket)],
      ['Transit score', orDash(listing.transitScore)],
      ['No fee', listing.noFee === null ? null : listing.noFee ? 'yes' : 'no'],
      ['Building', listing.buildingId],
    ].filter(([, value]) => value !== null);
    panel.replaceChildren(
      close,
      el(
        'h2',
        { 'data-listing-id': listing.id },
        listing.address?.street ?? `Listing ${listing.id}`,
        listing.address?.unit ? ` #${listing.address.unit}` : '',
      ),
      el('p', {}, [listing.areaName, listing.address?.zipCode].filter(Boolean).join(' · ')),
      el(
        'table',
        {},
        facts.map(([name, value]) => el('tr', {}, el('th', {}, name), el('td', name === 'Estimate' ? { id: 'estimate' } : {}, value))),
      ),
      el('h3', {}, 'Comparables'),
      comparables instanceof ApiError
        ? el('p', { class: 'error' }, comparables.message)
        : el(
            'table',
            { id: 'comparables' },
            comparables.data.map((c) =>
              el(
                'tr',
                {},
                el('td', {}, el('button', { type: 'button', onclick: () => openListing(c.listing.id) }, dollars(c.listing.price))),
                el('td', {}, `${orDash(c.listing.bedroomCount)} bd`),
                el('td', {}, `${c.distance} m`),
                el('td', {}, `${Math.round(c.similarity)} %`),
              ),
            ),
          ),
      el('h3', {}, `Market: ${listing.areaName ?? 'area'}`),
      market === null
        ? el('p', {}, 'No area known.')
        : market instanceof ApiError
          ? el('p', { class: 'error' }, market.message)
          : el(
              'table',
              { id: 'market' },
              el('tr', {}, el('th', {}, 'Active'), el('td', {}, market.data.activeCount.toLocaleString('en-US'))),
              el('tr', {}, el('th', {}, 'Median'), el('td', {}, dollars(market.data.medianPrice))),
              el(
                'tr',
                {},
                el('th', {}, '25th–75th percentile'),
                el('td', {}, `${dollars(market.data.p25Price)} – ${dollars(market.data.p75Price)}`),
              ),
              el('tr', {}, el('th', {}, 'Median days on market'), el('td', {}, orDash(market.data.medianDaysOnMarket))),
            ),
    );
  } catch (error) {
    panel.replaceChildren(close, el('p', { class: 'error' }, error.message));
  }
}

/** The change stream (EventSource cannot send a header: the key goes as access_token); changed listings flash. */
function openStream(map) {
  const query = new URLSearchParams({ since: 'latest', kind: KINDS[state.kind], access_token: state.key });
  state.stream = new EventSource(`/v1/changes/stream?${query}`);
  const flash = (event) => {
    const change = JSON.parse(event.data);
    const point = change.data?.listing?.geoPoint;
    state.changesSeen += 1;
    document.body.dataset.changesSeen = String(state.changesSeen);
    if (!point) return;
    const source = map.getSource('flashes');
    const feature = {
      type: 'Feature',
      id: change.id,
      geometry: { type: 'Point', coordinates: [point.longitude, point.latitude] },
      properties: { type: change.type },
    };
    state.flashes = [...(state.flashes ?? []), feature];
    source.setData({ type: 'FeatureCollection', features: state.flashes });
    setTimeout(() => {
      state.flashes = state.flashes.filter((f) => f !== feature);
      source.setData({ type: 'FeatureCollection', features: state.flashes });
    }, 3000);
  };
  for (const type of ['listing.listed', 'listing.price_changed', 'listing.status_changed']) state.stream.addEventListener(type, flash);
}

/** The city drawn from the areas' own outlines: boroughs filled, neighbourhoods outlined (no tiles). */
async function drawCity(map) {
  const { data: areas } = await api('/v1/areas?include=boundary');
  const outlines = (level) => ({
    type: 'FeatureCollection',
    features: areas
      .filter((a) => a.boundary && (level === 0 ? a.level === 0 : a.level > 0))
      .map((a) => ({ type: 'Feature', geometry: a.boundary, properties: { name: a.name, slug: a.slug } })),
  });
  map.addSource('boroughs', { type: 'geojson', data: outlines(0) });
  map.addSource('neighbourhoods', { type: 'geojson', data: outlines(1) });
  map.addLayer({ id: 'boroughs', type: 'fill', source: 'boroughs', paint: { 'fill-color': '#f3f0e8' } });
  map.addLayer({ id: 'neighbourhoods', type: 'line', source: 'neighbourhoods', paint: { 'line-color': '#c9c3b4', 'line-width': 0.6 } });
  map.addLayer({ id: 'borough-lines', type: 'line', source: 'boroughs', paint: { 'line-color': '#8d8573', 'line-width': 1.2 } });
  return areas;
}

/** Listings as clustered points (no labels: the page loads no fonts), and the live changes' flashes. */
function drawListingLayers(map) {
  map.addSource('listings', {
    type: 'geojson',
    data: { type: 'FeatureCollection', features: [] },
    cluster: true,
    clusterRadius: 36,
    clusterMaxZoom: 15,
  });
  map.addLayer({
    id: 'clusters',
    type: 'circle',
    source: 'listings',
    filter: ['has', 'point_count'],
    paint: {
      'circle-color': '#3d6fb6',
      'circle-opacity': 0.75,
      'circle-stroke-color': '#fff',
      'circle-stroke-width': 1,
      'circle-radius': ['step', ['get', 'point_count'], 9, 10, 13, 50, 17, 200, 22],
    },
  });
  map.addLayer({
    id: 'listings',
    type: 'circle',
    source: 'listings',
    filter: ['!', ['has', 'point_count']],
    paint: { 'circle-color': '#d9480f', 'circle-radius': 5, 'circle-stroke-color': '#fff', 'circle-stroke-width': 1 },
  });
  // Every match, counted on the map's grid, when there are more than one page of them (sized by count, no labels).
  map.addSource('cells', { type: 'geojson', data: { type: 'FeatureCollection', features: [] } });
  map.addLayer({
    id: 'cells',
    type: 'circle',
    source: 'cells',
    paint: {
      'circle-color': '#5c3d99',
      'circle-opacity': 0.7,
      'circle-stroke-color': '#fff',
      'circle-stroke-width': 1,
      'circle-radius': ['step', ['get', 'count'], 6, 10, 9, 50, 13, 200, 17, 1000, 22],
    },
  });
  map.addSource('flashes', { type: 'geojson', data: { type: 'FeatureCollection', features: [] } });
  map.addLayer({
    id: 'flashes',
    type: 'circle',
    source: 'flashes',
    paint: {
      'circle-color': '#ffd43b',
      'circle-radius': 12,
      'circle-opacity': 0.8,
      'circle-stroke-color': '#e67700',
      'circle-stroke-width': 2,
    },
  });

  map.on('click', 'clusters', async (event) => {
    const cluster = event.features[0];
    const zoom = await map.getSource('listings').getClusterExpansionZoom(cluster.properties.cluster_id);
    map.easeTo({ center: cluster.geometry.coordinates, zoom });
  });
  map.on('click', 'listings', (event) => openListing(event.features[0].properties.id));
  map.on('click', 'cells', (event) => map.easeTo({ center: event.features[0].geometry.coordinates, zoom: map.getZoom() + 2 }));
  for (const layer of ['clusters', 'listings', 'cells']) {
    map.on('mouseenter', layer, () => {
      map.getCanvas().style.cursor = 'pointer';
    });
    map.on('mouseleave', layer, () => {
      map.getCanvas().style.cursor = '';
    });
  }
}

/** Fits the map to the first area the `areas` parameter names (by slug or id), when it has an outline. */
function fitToAreas(map, areas, value) {
  const first = (value ?? '').split(',')[0].trim().toLowerCase();
  const area = areas.find((a) => a.slug === first || String(a.id) === first);
  if (!area?.boundary) return false;
  const bounds = new maplibregl.LngLatBounds();
  for (const position of area.boundary.coordinates[0]) bounds.extend(position);
  map.fitBounds(bounds, { padding: 30, duration: 0 });
  return true;
}

/** Suggests area slugs for the last name typed in the areas box (GET /v1/areas?q=). */
async function suggestAreas(text) {
  const last = text.split(',').pop().trim();
  if (last.length < 2) return;
  const { data } = await api(`/v1/areas?q=${encodeURIComponent(last)}&perPage=8`).catch(() => ({ data: [] }));
  $('#area-names').replaceChildren(
    ...data.map((a) =>
      el(
        'option',
        {
          value: [
            ...text
              .split(',')
              .slice(0, -1)
              .map((s) => s.trim())
              .filter(Boolean),
            a.slug,
          ].join(','),
        },
        a.name,
      ),
    ),
  );
}

async function main() {
  // A key given in the fragment of a page already open (a same-document navigation): start again with it.
  window.addEventListener('hashchange', () => {
    if (new URLSearchParams(location.hash.slice(1)).has('key')) location.reload();
  });
  state.key = readKey();
  $('#own-origin').textContent = location.origin;
  $('#key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('#key').value.trim();
    if (key) localStorage.setItem(KEY_STORAGE, key);
    else localStorage.removeItem(KEY_STORAGE);
    location.reload();
  });
  // The city's outlines, a listing's detail and the stream all need a key: without one the page only asks for it.
  if (!state.key) {
    setStatus('The explorer calls the API with a publishable key: issue one as shown above and give it here.');
    document.body.dataset.state = 'needs-key';
    return;
  }
  $('#key').value = state.key;
  state.spec = await api('/v1/openapi.json');
  state.plan = await readPlan();
  if (state.plan === null) {
    document.body.dataset.state = 'needs-key';
    return;
  }
  const query = new URLSearchParams(location.search);
  if (query.get('kind') in KINDS) state.kind = query.get('kind');
  $('#kind').value = state.kind;
  drawPanel(query);

  const map = new maplibregl.Map({
    container: 'map',
    style: { version: 8, sources: {}, layers: [{ id: 'water', type: 'background', paint: { 'background-color': '#cad9e6' } }] },
    ...CITY_VIEW,
    attributionControl: { compact: true, customAttribution: 'Outlines: the listings site · Data: nyc-listings' },
  });
  map.addControl(new maplibregl.NavigationControl({ showCompass: false }));
  window.explorer = { map, state };
  await map.once('load');
  const areas = await drawCity(map);
  drawListingLayers(map);

  let timer = null;
  const searchSoon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => search(map), 250);
  };
  map.on('moveend', searchSoon);
  $('#kind').addEventListener('change', () => {
    state.kind = $('#kind').value;
    drawPanel(panelQuery());
    state.stream?.close();
    state.stream = null;
    searchSoon();
  });
  $('#filters').addEventListener('submit', (event) => event.preventDefault());
  $('#filters').addEventListener('change', (event) => {
    if (event.target.name === 'areas' && fitToAreas(map, areas, event.target.value)) return; // the move searches
    searchSoon();
  });
  $('#filters').addEventListener('input', (event) => {
    if (event.target.name === 'areas') void suggestAreas(event.target.value);
  });
  fitToAreas(map, areas, query.get('areas'));
  searchSoon();
}

main().catch((error) => setStatus(`The explorer could not start: ${error.message}`, true));
