// page/limit parsing and Forgejo's X-Total-Count and Link headers for every list endpoint.
import { Type, type Static } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The page/limit query fields, to spread into a route's querystring schema with its own fields. */
export const PageFields = {
  page: Type.Optional(
    Type.Integer({ maximum: 2147483647, description: 'page number of results to return (1-based)' }),
  ),
  limit: Type.Optional(Type.Integer({ maximum: 2147483647, description: 'page size of results' })),
};
export const PageQuery = Type.Object(PageFields);
export type PageQuery = Static<typeof PageQuery>;

export interface Page {
  page: number;
  limit: number;
  offset: number;
}

export interface PagingSettings {
  defaultPagingNum: number;
  maxResponseItems: number;
}

export function pageOf(
  q: { page?: number | undefined; limit?: number | undefined },
  s: PagingSettings,
): Page {
  const page = q.page && q.page > 0 ? q.page : 1;
  let limit = q.limit && q.limit > 0 ? q.limit : s.defaultPagingNum;
  if (limit > s.maxResponseItems) limit = s.maxResponseItems;
  return { page, limit, offset: (page - 1) * limit };
}

/** Sets X-Total-Count and a Link header with next/last/first/prev relations, as Forgejo does. */
export function setPageHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  total: number,
  page: Page,
  baseUrl: string,
): void {
  reply.header('X-Total-Count', String(total));
  const lastPage = Math.max(1, Math.ceil(total / page.limit));
  const url = new URL(request.url, baseUrl);
  const link = (p: number, rel: string) => {
    url.searchParams.set('page', String(p));
    url.searchParams.set('limit', String(page.limit));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page.page < lastPage) links.push(link(page.page + 1, 'next'), link(lastPage, 'last'));
  if (page.page > 1) links.push(link(1, 'first'), link(page.page - 1, 'prev'));
  if (links.length) reply.header('Link', links.join(','));
  reply.header('Access-Control-Expose-Headers', 'X-Total-Count, Link');
}

/** Sends one page of a list: the headers, then the rows converted to JSON. */
export function sendPage<R, J>(
  request: FastifyRequest,
  reply: FastifyReply,
  [rows, total]: [R[], number],
  page: Page,
  baseUrl: string,
  toJson: (row: R) => J,
): J[] {
  setPageHeaders(request, reply, total, page, baseUrl);
  return rows.map(toJson);
}
