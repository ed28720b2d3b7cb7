// Internal endpoints for `anvil serv` (OpenSSH mode), a process sshd starts per connection: it
// asks here whether a key may run a command and gets what to run (git's directory and the push
// pipeline's environment), runs git itself, and reports a finished push back. Authenticated by
// [security] INTERNAL_TOKEN, shared through the configuration or the data directory.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Refusal, type SshCommands } from './command.js';
import type { SshKeyService } from './service.js';
import { logFailure } from '../http/request-log.js';

export interface ServRequest {
  /** `key-<id>` (a user key) or `deploy-<id>` (a deploy key), as `anvil keys` wrote it. */
  key: string;
  command: string;
  protocol?: string;
}

export type ServAnswer =
  | { ok: false; message: string }
  | { ok: true; kind: 'text'; text: string }
  | {
      ok: true;
      kind: 'git';
      service: string;
      dir: string;
      env: Record<string, string>;
      pushId?: string;
      wikiOf?: number;
    };

/** Whether the request carries [security] INTERNAL_TOKEN (`expected`; none set: never). */
export function internalTokenValid(expected: string, request: FastifyRequest): boolean {
  if (!expected) return false;
  const presented = Buffer.from((request.headers.authorization ?? '').replace(/^Bearer /, ''));
  const want = Buffer.from(expected);
  return presented.length === want.length && crypto.timingSafeEqual(presented, want);
}

export interface SshInternalRoutesDeps {
  sshKeys: Pick<SshKeyService, 'principalOf' | 'markUsed'>;
  sshCommands: SshCommands;
  /** [security] INTERNAL_TOKEN */
  internalToken: string;
}

export function sshInternalRoutes(app: FastifyInstance, deps: SshInternalRoutesDeps): void {
  const { sshKeys, internalToken } = deps;
  const commands = deps.sshCommands;

  app.post<{ Body: ServRequest }>(
    '/api/internal/ssh/serv',
    { schema: { hide: true } },
    async (request, reply) => {
      if (!internalTokenValid(internalToken, request))
        return reply.code(401).send({ ok: false, message: 'invalid internal token' });
      const b = (request.body ?? {}) as Partial<ServRequest>;
      if (typeof b.key !== 'string' || typeof b.command !== 'string') {
        return reply.code(400).send({ ok: false, message: 'key and command are required' });
      }
      const principal = await sshKeys.principalOf(b.key);
      if (!principal)
        return reply.send({ ok: false, message: 'the key is not known to Anvil' } satisfies ServAnswer);
      await sshKeys.markUsed(principal);
      try {
        const prepared = await commands.prepare(
          principal,
          b.command,
          typeof b.protocol === 'string' ? b.protocol : undefined,
        );
        return reply.send({ ok: true, ...prepared } satisfies ServAnswer);
      } catch (err) {
        if (err instanceof Refusal)
          return reply.send({ ok: false, message: err.message } satisfies ServAnswer);
        throw err;
      }
    },
  );

  app.post<{ Body: { pushId?: string; wikiOf?: number } }>(
    '/api/internal/ssh/push-done',
    { schema: { hide: true } },
    async (request, reply) => {
      if (!internalTokenValid(internalToken, request))
        return reply.code(401).send({ ok: false, message: 'invalid internal token' });
      const { pushId, wikiOf } = request.body ?? {};
      if (typeof wikiOf === 'number') {
        await commands.finishWikiPush(wikiOf);
        return reply.send({ ok: true });
      }
      if (typeof pushId !== 'string')
        return reply.code(400).send({ ok: false, message: 'pushId is required' });
      // The answer goes out once the push is recorded; events and webhooks follow.
      await new Promise<void>((resolve) => {
        void commands.finishPush(pushId, resolve).catch((err: unknown) => {
          logFailure(request, err, 'finishing an ssh push failed');
          resolve();
        });
      });
      return reply.send({ ok: true });
    },
  );
}
