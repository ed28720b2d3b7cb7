// Turning a page's component tree into the HTML document sent to the browser. Preact's string
// renderer escapes every text and attribute value; the only way to put markup in a page unescaped
// is `dangerouslySetInnerHTML`, used solely for HTML the sanitizing markdown renderer produced.
import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

export function renderDocument(page: VNode): string {
  return `<!DOCTYPE html>\n${render(page)}`;
}

export function sendHtml(reply: FastifyReply, page: VNode, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .header('X-Frame-Options', 'SAMEORIGIN')
    .header('X-Content-Type-Options', 'nosniff')
    .header(
      'Content-Security-Policy',
      "default-src 'self'; img-src 'self' data: https:; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'",
    )
    .type('text/html; charset=utf-8')
    .send(renderDocument(page));
}
