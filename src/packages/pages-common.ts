// What the packages web pages share: the URL's parameters, the browser's user as the package
// service's identity, and reading as the API does with what may not be seen simply not found.
import type { FastifyRequest } from 'fastify';
import type { Identity } from '../auth/identity.js';
import { AppError } from '../errors.js';
import { ALL_SCOPES } from '../tokens/scopes.js';

export const param = (request: FastifyRequest, name: string): string =>
  (request.params as Record<string, string>)[name] ?? '';

/** The browser's user as the package service's identity (a session carries every scope). */
export function identityOf(request: FastifyRequest): Identity | null {
  const user = request.web.user;
  return user ? { user, method: 'basic', scopes: ALL_SCOPES } : null;
}

/** Reading as the API does, but a page someone may not see is simply not found. */
export async function hidden<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError && err.kind === 'not_found') throw err;
    if (err instanceof Error && /authentication required|may not read|scope/.test(err.message))
      throw new AppError('not_found', 'package does not exist');
    throw err;
  }
}
