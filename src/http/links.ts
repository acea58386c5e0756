/**
 * Pagination links (spec 2.1 `meta.links`): paths beginning with `/v1/` that echo the request's
 * filter parameters, in the order given, followed by `page` and the `perPage` in effect. `prev` is null
 * on the first page, `next` on the last; `last` is page 1 when nothing matches. With `nextCursor`,
 * `next` also carries it (`cursor=`): following it reads the next page by keyset, as cheap as the first.
 */
export function pageLinks(path: string, rawUrl: string, page: number, perPage: number, total: number, nextCursor: string | null = null) {
  const given = new URLSearchParams(rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?') + 1) : '');
  const filters = [...given.entries()].filter(([name]) => name !== 'page' && name !== 'perPage' && name !== 'cursor');
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  // The filters are encoded once; `page` and `perPage` follow them, as URLSearchParams#set appends a name not yet present.
  const encoded = new URLSearchParams(filters).toString();
  const link = (p: number): string => `${path}?${encoded ? `${encoded}&` : ''}page=${p}&perPage=${perPage}`;
  return {
    self: link(page),
    first: link(1),
    last: link(lastPage),
    prev: page > 1 ? link(Math.min(page - 1, lastPage)) : null,
    next: page < lastPage ? link(page + 1) + (nextCursor ? `&cursor=${nextCursor}` : '') : null,
  };
}
