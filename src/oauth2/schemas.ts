// OAuth2 application JSON, as Forgejo's OAuth2Application and CreateOAuth2ApplicationOptions.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { redirectUrisOf } from './service.js';
import type { OAuth2AppRow } from './tables.js';

export const OAuth2Application = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    client_id: Type.String(),
    client_secret: Type.String({
      description: 'the client secret: only in the answer to its creation, empty afterwards',
    }),
    redirect_uris: Type.Array(Type.String()),
    confidential_client: Type.Boolean(),
    created: Type.String({ format: 'date-time' }),
  },
  { title: 'OAuth2Application' },
);
export type OAuth2ApplicationJson = Static<typeof OAuth2Application>;

export const CreateOAuth2ApplicationOptions = Type.Object(
  {
    name: Type.Optional(Type.String()),
    redirect_uris: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
    confidential_client: Type.Optional(Type.Boolean()),
  },
  { title: 'CreateOAuth2ApplicationOptions' },
);

export function toOAuth2AppJson(row: OAuth2AppRow, secret = ''): OAuth2ApplicationJson {
  return {
    id: row.id,
    name: row.name,
    client_id: row.client_id,
    client_secret: secret,
    redirect_uris: redirectUrisOf(row),
    confidential_client: row.confidential_client === 1,
    created: isoTime(row.created_unix),
  };
}
