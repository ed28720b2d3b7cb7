// The OAuth2 provider's pages, at Forgejo's addresses: /login/oauth/authorize (sign in first, then
// the consent page, or straight back to the client), the consent form's POST /login/oauth/grant
// (Forgejo's fields: client_id, redirect_uri, state, scope, nonce, granted; PKCE's challenge rides
// along as hidden fields, and the whole request is checked again by the provider), and the revoke
// button of an authorized application in the user's settings. A request whose client or redirect
// URI is not registered is answered with a page here, never with a redirect.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { notFound } from '../errors.js';
import { Layout, CsrfField, type PageContext } from '../web/layout.js';
import { formText, type Web } from '../web/plugin.js';
import type { AuthorizationRequest, AuthorizeOutcome, OAuth2Provider } from './provider.js';
import { apiScopeWords, scopeWords } from './scopes.js';
import type { OAuth2AppRow } from './tables.js';

export interface ConsentPagesDeps {
  provider: Pick<OAuth2Provider, 'authorize' | 'grant' | 'revokeGrant' | 'creatorOf'>;
}

const REQUEST_FIELDS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'state',
  'scope',
  'nonce',
  'code_challenge',
  'code_challenge_method',
] as const;

function requestOf(fields: unknown): AuthorizationRequest {
  const f = (fields ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    REQUEST_FIELDS.map((k) => [k, formText(f[k]).slice(0, 2048)]),
  ) as unknown as AuthorizationRequest;
}

/** What the scope words of a request mean, as the user reads them. */
function scopeLines(scope: string): string[] {
  const words = scopeWords(scope);
  const lines = ['profile: your user name, full name, primary e-mail address and avatar'];
  if (words.includes('groups')) lines.push('groups: the organizations and teams you belong to');
  const api = apiScopeWords(scope).filter((w) => w !== 'public-only');
  lines.push(
    api.length
      ? `API access: ${api.join(', ')}`
      : 'API access: everything you can do, in every repository and organization you can reach',
  );
  if (words.includes('public-only')) lines.push('limited to public repositories and organizations');
  return lines;
}

function ConsentPage(props: {
  page: PageContext;
  app: OAuth2AppRow;
  creator: { name: string } | undefined;
  request: AuthorizationRequest;
}): VNode {
  const { page, app, creator, request } = props;
  const hidden = (name: keyof AuthorizationRequest) => (
    <input type="hidden" name={name} value={request[name]} />
  );
  return (
    <Layout page={page} title="Authorize application">
      <section class="narrow card oauth2-consent">
        <h1>Authorize "{app.name}" to access your account?</h1>
        <p>The application asks for:</p>
        <ul>
          {scopeLines(request.scope).map((line) => (
            <li>{line}</li>
          ))}
        </ul>
        <p class="muted">
          This application was created by{' '}
          {creator ? <a href={`/${encodeURIComponent(creator.name)}`}>@{creator.name}</a> : 'this site'}.
        </p>
        <p>
          You will be redirected to <strong>{request.redirect_uri}</strong> if you authorize this application.
        </p>
        <form method="post" action="/login/oauth/grant">
          <CsrfField page={page} />
          {hidden('client_id')}
          {hidden('state')}
          {hidden('scope')}
          {hidden('nonce')}
          {hidden('redirect_uri')}
          {hidden('code_challenge')}
          {hidden('code_challenge_method')}
          <button type="submit" id="authorize-app" name="granted" value="true" class="primary">
            Authorize Application
          </button>{' '}
          <button type="submit" name="granted" value="false">
            Cancel
          </button>
        </form>
      </section>
    </Layout>
  );
}

function RefusedPage(props: { page: PageContext; error: string; description: string }): VNode {
  return (
    <Layout page={props.page} title="Authorization failed">
      <section class="narrow card error-page">
        <h1>Authorization failed</h1>
        <p>
          The application's request cannot be followed: {props.description} (<code>{props.error}</code>).
        </p>
        <p class="muted">Nothing was shared with it. Tell the application's owner.</p>
      </section>
    </Layout>
  );
}

const idParam = (raw: string | undefined): number => {
  if (!raw || !/^\d{1,15}$/.test(raw)) throw notFound('The OAuth2 grant does not exist.');
  return Number(raw);
};

export function consentPages(app: FastifyInstance, web: Web, deps: ConsentPagesDeps): void {
  const answer = async (
    request: FastifyRequest,
    reply: FastifyReply,
    outcome: AuthorizeOutcome,
  ): Promise<FastifyReply> => {
    if (outcome.kind === 'redirect') return reply.code(303).header('Location', outcome.location).send();
    const page = web.page(request);
    if (outcome.kind === 'refused') {
      return web.send(
        reply,
        <RefusedPage page={page} error={outcome.error} description={outcome.description} />,
        400,
      );
    }
    const creator = await deps.provider.creatorOf(outcome.app);
    return web.send(
      reply,
      <ConsentPage page={page} app={outcome.app} creator={creator} request={outcome.request} />,
    );
  };

  app.get('/login/oauth/authorize', async (request, reply) => {
    const user = web.requireUser(request);
    return answer(request, reply, await deps.provider.authorize(user, requestOf(request.query)));
  });

  app.post('/login/oauth/grant', async (request, reply) => {
    const user = web.requireUser(request);
    const granted = formText((request.body as Record<string, unknown> | undefined)?.['granted']) === 'true';
    return answer(request, reply, await deps.provider.grant(user, requestOf(request.body), granted));
  });

  app.post('/user/settings/applications/oauth2/:id/revoke/:grantId', async (request, reply) => {
    const user = web.requireUser(request);
    const params = request.params as { id?: string; grantId?: string };
    await deps.provider.revokeGrant(user, idParam(params.id), idParam(params.grantId));
    return web.redirect(reply, '/user/settings/applications', {
      kind: 'info',
      text: 'The access of the application has been revoked: its tokens no longer work.',
    });
  });
}
