/**
 * Headers public clients of the site send (upstream-api.md: which are required is unknown). The
 * `UPSTREAM_HEADERS` setting adds to or replaces them.
 */
export const SITE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  accept: 'application/json',
  'apollographql-client-name': 'srp-frontend-service',
  'apollographql-client-version': 'nyc-listings-mirror',
  'app-version': '1.0.0',
  os: 'web',
  origin: 'https://streeteasy.com',
  referer: 'https://streeteasy.com/',
  'x-forwarded-proto': 'https',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
};
