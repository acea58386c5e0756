// The README's example: a search and a property lookup, then every Queens doorman rental, page by page.
import { createNycListingsClient } from './src/index.js';

const client = createNycListingsClient({
  baseUrl: process.env.NYC_LISTINGS_URL ?? 'http://127.0.0.1:8080',
  apiKey: process.env.NYC_LISTINGS_KEY,
});

const { data: search, error } = await client.GET('/v1/search/rentals', {
  params: { query: { areas: '300', maxPrice: 3000, minBeds: 1, perPage: 5 } },
});
if (error) throw new Error(`${error.code}: ${error.detail}`);
console.log(`${search.meta.total} rentals; first: ${search.data[0]?.id} at $${search.data[0]?.price}`);

const { data: listing } = await client.GET('/v1/property/{id}', { params: { path: { id: '8000000' } } });
console.log(`${listing?.data.address.street} ${listing?.data.address.unit}: $${listing?.data.price}`);

let count = 0;
for await (const rental of client.pages('/v1/search/rentals', { areas: '300', amenities: 'DOORMAN', perPage: 50 }))
  count += rental.price > 0 ? 1 : 0;
console.log(`${count} Queens doorman rentals walked`);
