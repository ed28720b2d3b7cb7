import { Type, type Static } from 'typebox';
import type { TokenRow } from './tables.js';
import { storedScopes, formatScopes } from './scopes.js';
import { isoTime } from '../http/format.js';

export const AccessToken = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    sha1: Type.String({
      description: 'the token itself: only in the answer to its creation, empty afterwards',
    }),
    token_last_eight: Type.String(),
    scopes: Type.Array(Type.String()),
    scope: Type.String({ description: 'comma-separated, normalized scope string' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'AccessToken' },
);
export type AccessTokenJson = Static<typeof AccessToken>;

export const CreateAccessTokenOption = Type.Object(
  {
    name: Type.String(),
    scopes: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'CreateAccessTokenOption' },
);

export function toTokenJson(row: TokenRow, token = ''): AccessTokenJson {
  // Tokens from before scopes existed have an empty scope, which means all.
  const scope = row.scope === '' ? formatScopes(storedScopes('')) : row.scope;
  return {
    id: row.id,
    name: row.name,
    sha1: token,
    token_last_eight: row.token_last_eight,
    scopes: scope.split(','),
    scope,
    created_at: isoTime(row.created_unix),
    updated_at: isoTime(row.updated_unix),
  };
}
