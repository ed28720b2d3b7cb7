// The one error model. Services throw AppError with a kind; the HTTP layer maps kinds to statuses
// (http/errors.ts) and the CLI prints the message. Nothing below the routes knows about HTTP.

export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'precondition_failed'
  | 'gone'
  | 'payload_too_large'
  | 'too_many_requests'
  | 'invalid'
  | 'unavailable'
  | 'moved'
  | 'internal';

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Extra fields for the JSON body (Forgejo's `errors` list on 404, for example). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/**
 * What a request named has a new name (an account or repository renamed or transferred): the
 * HTTP layer answers 307 to the same URL with the `from` path segments replaced by `to`.
 */
export class MovedError extends AppError {
  constructor(
    readonly from: readonly string[],
    readonly to: readonly string[],
  ) {
    super('moved', `moved to ${to.join('/')}`);
  }
}

export const badRequest = (message: string) => new AppError('bad_request', message);
export const unauthorized = (message: string) => new AppError('unauthorized', message);
export const forbidden = (message: string) => new AppError('forbidden', message);
export const notFound = (message = "The target couldn't be found.") => new AppError('not_found', message);
export const conflict = (message: string) => new AppError('conflict', message);
/** 412: the target is not in a state that allows the change (an issue with open dependencies). */
export const preconditionFailed = (message: string) => new AppError('precondition_failed', message);
/** 422: the request is well-formed but a field's value cannot be used; the message names the field. */
export const invalid = (message: string) => new AppError('invalid', message);
export const methodNotAllowed = (message: string) => new AppError('method_not_allowed', message);

/** Go-style field name used in Forgejo's validation messages: created_at -> CreatedAt. */
export function fieldLabel(name: string): string {
  return name
    .split(/[_\-.]/)
    .filter(Boolean)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

/** A validation failure in Forgejo's shape: "[Field]: reason". */
export const invalidField = (field: string, reason: string) => invalid(`[${fieldLabel(field)}]: ${reason}`);
