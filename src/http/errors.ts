// Maps every failure to Forgejo's JSON error shape {"message", "url"} with the right status.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, fieldLabel, type ErrorKind } from '../errors.js';

export const statusOf: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  invalid: 422,
  unavailable: 503,
  internal: 500,
};

interface AjvIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** "[Field]: reason" for the first failing field, as Forgejo's binding errors read. */
function validationMessage(issues: AjvIssue[], context: string | undefined): string {
  const issue = issues[0];
  if (!issue) return 'validation failed';
  const segments = (issue.instancePath ?? '').split('/').filter(Boolean);
  let field = segments.filter((s) => !/^\d+$/.test(s)).pop() ?? '';
  let reason = issue.message ?? 'is invalid';
  if (issue.keyword === 'required' && typeof issue.params?.['missingProperty'] === 'string') {
    field = issue.params['missingProperty'];
    reason = 'Required';
  } else if (issue.keyword === 'format') {
    reason = `must be a valid ${String(issue.params?.['format'] ?? 'value')}`;
  } else if (issue.keyword === 'additionalProperties') {
    reason = `unknown field ${String(issue.params?.['additionalProperty'] ?? '')}`;
  }
  const where = context && context !== 'body' ? ` (${context})` : '';
  return field ? `[${fieldLabel(field)}]: ${reason}${where}` : `${reason}${where}`;
}

export function registerErrorHandling(app: FastifyInstance, docsUrl: string): void {
  const send = (reply: FastifyReply, status: number, message: string, extra: Record<string, unknown> = {}) =>
    reply
      .code(status)
      .type('application/json; charset=utf-8')
      .send({ message, url: docsUrl, ...extra });

  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      return send(reply, statusOf[err.kind], err.message, err.extra);
    }
    if (err.validation) {
      return send(reply, 422, validationMessage(err.validation as AjvIssue[], err.validationContext));
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Fastify's own refusals: malformed JSON, unsupported media type, body too large, ...
      return send(reply, status, err.message);
    }
    // Below `info`, request.log is not bound to the request (see app/server.ts): name it here.
    const named =
      (request.log as unknown as { bindings(): Record<string, unknown> }).bindings()['reqId'] !== undefined;
    request.log.error(
      named ? { err } : { err, reqId: request.id, method: request.method, url: request.url },
      'unexpected failure',
    );
    return send(reply, 500, 'Internal Server Error');
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, 404, "The target couldn't be found.", {
      errors: [`${request.method} ${request.url.split('?')[0]}`],
    }),
  );
}
