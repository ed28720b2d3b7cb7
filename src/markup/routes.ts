// /markdown, /markdown/raw and /markup: Forgejo's rendering endpoints, answering text/html.
import type { Api } from '../http/types.js';
import type { MarkupService } from './service.js';
import { MarkdownOption, MarkupOption, RenderedHtml } from './schemas.js';

const HTML = 'text/html; charset=utf-8';

export interface MarkupRoutesDeps {
  markup: MarkupService;
}

export function markupRoutes(app: Api, { markup }: MarkupRoutesDeps): void {
  app.post(
    '/markdown',
    {
      schema: {
        tags: ['miscellaneous'],
        operationId: 'renderMarkdown',
        summary: 'Render a markdown document as HTML',
        body: MarkdownOption,
        response: { 200: RenderedHtml },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const mode = b.Wiki && !b.Mode ? 'wiki' : b.Mode;
      const html = await markup.render({ text: b.Text ?? '', mode, context: b.Context }, request.viewer);
      return reply.type(HTML).send(html);
    },
  );

  app.post(
    '/markup',
    {
      schema: {
        tags: ['miscellaneous'],
        operationId: 'renderMarkup',
        summary: 'Render a markup document as HTML',
        body: MarkupOption,
        response: { 200: RenderedHtml },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const html = await markup.render(
        { text: b.Text ?? '', mode: b.Mode, context: b.Context, filePath: b.FilePath },
        request.viewer,
      );
      return reply.type(HTML).send(html);
    },
  );

  // The raw form takes the document itself as the body (text/plain, or any text).
  void app.register(async (scope) => {
    scope.addContentTypeParser(['text/plain', 'text/markdown'], { parseAs: 'string' }, (_r, body, done) =>
      done(null, body),
    );
    scope.post(
      '/markdown/raw',
      {
        schema: {
          tags: ['miscellaneous'],
          operationId: 'renderMarkdownRaw',
          summary: 'Render raw markdown as HTML',
          consumes: ['text/plain'],
          response: { 200: RenderedHtml },
        },
        bodyLimit: 1 << 20,
      },
      async (request, reply) => {
        const text = typeof request.body === 'string' ? request.body : '';
        return reply.type(HTML).send(await markup.render({ text }, request.viewer));
      },
    );
  });
}
