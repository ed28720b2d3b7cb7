// Twirp (v7/v8 wire protocol) for the artifact service: POST /twirp/<package>.ArtifactService/<Method>
// with a JSON (proto3 JSON mapping) or binary protobuf body, answered in the request's encoding;
// errors are always JSON {"code", "msg"} with Twirp's HTTP status for the code.
//
// The same service is served under Anvil's package name and under the one the unmodified
// @actions/artifact client uses: the messages are wire-identical, only the path prefix differs.
import {
  fromBinary,
  fromJson,
  toBinary,
  toJson,
  type DescMessage,
  type JsonValue,
  type MessageShape,
} from '@bufbuild/protobuf';
import { AppError, type ErrorKind } from '../errors.js';
import { ArtifactError } from './errors.js';

export const PACKAGES = ['vendor.actions.results.api.v1', 'github.actions.results.api.v1'] as const;
export const SERVICE = 'ArtifactService';

/** Twirp's error codes and the HTTP status each is sent with. */
export const TWIRP_STATUS = {
  canceled: 408,
  unknown: 500,
  invalid_argument: 400,
  malformed: 400,
  deadline_exceeded: 408,
  not_found: 404,
  bad_route: 404,
  already_exists: 409,
  permission_denied: 403,
  unauthenticated: 401,
  resource_exhausted: 429,
  failed_precondition: 412,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  dataloss: 500,
} as const;
export type TwirpCode = keyof typeof TWIRP_STATUS;

const KIND_CODE: Record<ErrorKind, TwirpCode> = {
  bad_request: 'invalid_argument',
  invalid: 'invalid_argument',
  unauthorized: 'unauthenticated',
  forbidden: 'permission_denied',
  not_found: 'not_found',
  gone: 'not_found',
  moved: 'not_found',
  method_not_allowed: 'bad_route',
  conflict: 'already_exists',
  precondition_failed: 'failed_precondition',
  payload_too_large: 'resource_exhausted',
  too_many_requests: 'resource_exhausted',
  unavailable: 'unavailable',
  internal: 'internal',
};

export class TwirpError extends Error {
  constructor(
    readonly code: TwirpCode,
    message: string,
  ) {
    super(message);
    this.name = 'TwirpError';
  }

  get status(): number {
    return TWIRP_STATUS[this.code];
  }

  toJSON(): { code: TwirpCode; msg: string } {
    return { code: this.code, msg: this.message };
  }
}

/** The Twirp error for anything a handler threw; `undefined` for an unexpected failure (internal). */
export function twirpErrorOf(err: unknown): TwirpError | undefined {
  if (err instanceof TwirpError) return err;
  if (err instanceof ArtifactError && err.codes.twirp && err.codes.twirp in TWIRP_STATUS) {
    return new TwirpError(err.codes.twirp as TwirpCode, err.message);
  }
  if (err instanceof AppError) return new TwirpError(KIND_CODE[err.kind], err.message);
  return undefined;
}

export type Encoding = 'json' | 'protobuf';

/** The encoding a Content-Type names: application/json or application/protobuf (also x-protobuf). */
export function encodingOf(contentType: string | undefined): Encoding | undefined {
  const mime = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (mime === 'application/json') return 'json';
  if (mime === 'application/protobuf' || mime === 'application/x-protobuf') return 'protobuf';
  return undefined;
}

export const CONTENT_TYPE: Record<Encoding, string> = {
  json: 'application/json',
  protobuf: 'application/protobuf',
};

/**
 * A request message from its body. JSON takes both the proto field names (snake_case) and their
 * lowerCamelCase JSON names, int64 as strings or numbers, and ignores unknown fields; binary
 * protobuf skips unknown fields. Anything undecodable is Twirp's `malformed`.
 */
export function decode<D extends DescMessage>(schema: D, encoding: Encoding, body: Buffer): MessageShape<D> {
  try {
    if (encoding === 'protobuf') return fromBinary(schema, body);
    const json = JSON.parse(body.toString('utf8')) as JsonValue;
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      throw new Error('the body must be a JSON object');
    }
    return fromJson(schema, json, { ignoreUnknownFields: true });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new TwirpError(
      'malformed',
      `the ${encoding === 'json' ? 'JSON' : 'protobuf'} body of the request could not be decoded: ${why}`,
    );
  }
}

/**
 * A response message in `encoding`. JSON uses the proto field names and writes every field, as
 * Twirp's Go servers do (so `"ok": false` is spelled out); int64 values are strings.
 */
export function encode<D extends DescMessage>(
  schema: D,
  encoding: Encoding,
  message: MessageShape<D>,
): Buffer | string {
  if (encoding === 'protobuf') return Buffer.from(toBinary(schema, message));
  return JSON.stringify(toJson(schema, message, { useProtoFieldName: true, alwaysEmitImplicit: true }));
}
