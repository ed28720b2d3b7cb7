// The runner-facing endpoints: connect-rpc (unary, Connect protocol) at
//   POST /api/actions/runner.v1.RunnerService/{Register,Declare,FetchTask,UpdateTask,UpdateLog}
//   POST /api/actions/ping.v1.PingService/Ping
// with binary protobuf (application/proto, what runners send) or JSON (application/json) bodies,
// answered in the request's encoding. Errors are Connect's: a JSON {"code", "message"} with the
// HTTP status of the code. Runners authenticate with the x-runner-uuid and x-runner-token headers
// (Register with a registration token in its body). With [actions] ENABLED = false every endpoint
// answers 404 with a message.
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  create,
  fromBinary,
  fromJson,
  toBinary,
  toJson,
  type DescMessage,
  type JsonValue,
  type MessageShape,
} from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { AppError, type ErrorKind } from '../errors.js';
import {
  DeclareRequestSchema,
  DeclareResponseSchema,
  FetchTaskRequestSchema,
  FetchTaskResponseSchema,
  RegisterRequestSchema,
  RegisterResponseSchema,
  RunnerSchema,
  TaskNeedSchema,
  TaskSchema,
  TaskStateSchema,
  UpdateLogRequestSchema,
  UpdateLogResponseSchema,
  UpdateTaskRequestSchema,
  UpdateTaskResponseSchema,
  type Runner,
} from './gen/runner/v1/messages_pb.js';
import { PingRequestSchema, PingResponseSchema } from './gen/ping/v1/messages_pb.js';
import { parseLabels, type RunnerService, type TaskData } from './runners.js';
import type { RunnerRow } from './tables.js';
import { logFailure } from '../http/request-log.js';

const gunzip = promisify(zlib.gunzip);

/** Largest request body (UpdateLog carries batches of rows). */
const MAX_BODY = 16 * 1024 * 1024;

/** Connect's error codes and the HTTP status each is sent with. */
const CONNECT_STATUS = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
} as const;
export type ConnectCode = keyof typeof CONNECT_STATUS;

const KIND_CODE: Record<ErrorKind, ConnectCode> = {
  bad_request: 'invalid_argument',
  invalid: 'invalid_argument',
  unauthorized: 'unauthenticated',
  forbidden: 'permission_denied',
  not_found: 'not_found',
  gone: 'not_found',
  moved: 'not_found',
  method_not_allowed: 'unimplemented',
  conflict: 'already_exists',
  precondition_failed: 'failed_precondition',
  payload_too_large: 'resource_exhausted',
  too_many_requests: 'resource_exhausted',
  unavailable: 'unavailable',
  internal: 'internal',
};

export class ConnectError extends Error {
  constructor(
    readonly code: ConnectCode,
    message: string,
    readonly status: number = CONNECT_STATUS[code],
  ) {
    super(message);
    this.name = 'ConnectError';
  }
}

type Encoding = 'proto' | 'json';

function encodingOf(contentType: string | undefined): Encoding | undefined {
  const mime = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (mime === 'application/proto' || mime === 'application/protobuf' || mime === 'application/x-protobuf') {
    return 'proto';
  }
  if (mime === 'application/json') return 'json';
  return undefined;
}

const CONTENT_TYPE: Record<Encoding, string> = { proto: 'application/proto', json: 'application/json' };

function decode<D extends DescMessage>(schema: D, enc: Encoding, body: Buffer): MessageShape<D> {
  try {
    if (enc === 'proto') return fromBinary(schema, body);
    const json = body.length ? (JSON.parse(body.toString('utf8')) as JsonValue) : {};
    if (json === null || typeof json !== 'object' || Array.isArray(json))
      throw new Error('the body must be a JSON object');
    return fromJson(schema, json, { ignoreUnknownFields: true });
  } catch (err) {
    throw new ConnectError(
      'invalid_argument',
      `the request body could not be decoded as ${schema.typeName}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

function encode<D extends DescMessage>(schema: D, enc: Encoding, msg: MessageShape<D>): Buffer {
  return enc === 'proto'
    ? Buffer.from(toBinary(schema, msg))
    : Buffer.from(JSON.stringify(toJson(schema, msg)));
}

function runnerMessage(row: RunnerRow, token = ''): Runner {
  return create(RunnerSchema, {
    id: BigInt(row.id),
    uuid: row.uuid,
    token,
    name: row.name,
    version: row.version,
    labels: parseLabels(row.labels),
  });
}

function taskMessage(t: TaskData) {
  return create(TaskSchema, {
    id: BigInt(t.id),
    workflowPayload: t.workflowPayload,
    context: t.context,
    secrets: t.secrets,
    vars: t.vars,
    needs: Object.fromEntries(
      Object.entries(t.needs).map(([k, n]) => [
        k,
        create(TaskNeedSchema, { outputs: n.outputs, result: n.result }),
      ]),
    ),
  });
}

const toNumber = (n: bigint, field: string): number => {
  if (n < 0n || n > BigInt(Number.MAX_SAFE_INTEGER))
    throw new ConnectError('invalid_argument', `${field} is out of range`);
  return Number(n);
};

type Method = (request: FastifyRequest, body: Buffer, enc: Encoding) => Promise<Buffer>;

export interface RunnerProtocolDeps {
  runners: RunnerService;
  /** [actions] ENABLED: every endpoint answers 404 while it is false. */
  enabled: boolean;
}

export function runnerProtocolRoutes(app: FastifyInstance, deps: RunnerProtocolDeps): void {
  const svc = deps.runners;

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY }, (_request, body, done) =>
    done(null, body),
  );

  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let connect: ConnectError;
    if (err instanceof ConnectError) connect = err;
    else if (err instanceof AppError) connect = new ConnectError(KIND_CODE[err.kind], err.message);
    else if (err.statusCode === 413) connect = new ConnectError('resource_exhausted', err.message);
    else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      connect = new ConnectError('invalid_argument', err.message);
    } else {
      logFailure(request, err, 'runner protocol: unexpected failure');
      connect = new ConnectError('internal', 'internal error');
    }
    // "Actions are disabled" is a plain 404, whatever the method.
    if (!deps.enabled) connect = new ConnectError('not_found', connect.message, 404);
    return reply
      .code(connect.status)
      .type('application/json')
      .send(JSON.stringify({ code: connect.code, message: connect.message }));
  });

  const runnerOf = (request: FastifyRequest, active = false) => {
    const h = (name: string) => {
      const v = request.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    return svc.authenticate(h('x-runner-uuid'), h('x-runner-token'), active);
  };

  const runnerMethods: Record<string, Method> = {
    async Register(_request, body, enc) {
      const req = decode(RegisterRequestSchema, enc, body);
      const { runner, token } = await svc.register({
        name: req.name,
        token: req.token,
        version: req.version,
        labels: req.labels.length ? req.labels : [...req.agentLabels, ...req.customLabels],
      });
      return encode(
        RegisterResponseSchema,
        enc,
        create(RegisterResponseSchema, { runner: runnerMessage(runner, token) }),
      );
    },
    async Declare(request, body, enc) {
      const runner = await runnerOf(request);
      const req = decode(DeclareRequestSchema, enc, body);
      const updated = await svc.declare(runner, req.version, req.labels);
      return encode(
        DeclareResponseSchema,
        enc,
        create(DeclareResponseSchema, { runner: runnerMessage(updated) }),
      );
    },
    async FetchTask(request, body, enc) {
      const runner = await runnerOf(request);
      decode(FetchTaskRequestSchema, enc, body);
      const socket = request.raw.socket;
      const task = await svc.fetchTask(runner, () => socket.destroyed);
      return encode(
        FetchTaskResponseSchema,
        enc,
        create(FetchTaskResponseSchema, {
          task: task ? taskMessage(task) : undefined,
          tasksVersion: BigInt(svc.tasksVersion),
        }),
      );
    },
    async UpdateTask(request, body, enc) {
      const runner = await runnerOf(request, true);
      const req = decode(UpdateTaskRequestSchema, enc, body);
      if (!req.state) throw new ConnectError('invalid_argument', 'state is required');
      const id = toNumber(req.state.id, 'state.id');
      const { result, sentOutputs } = await svc.updateTask(runner, id, req.state.result, req.outputs);
      return encode(
        UpdateTaskResponseSchema,
        enc,
        create(UpdateTaskResponseSchema, {
          state: create(TaskStateSchema, { id: req.state.id, result }),
          sentOutputs,
        }),
      );
    },
    async UpdateLog(request, body, enc) {
      const runner = await runnerOf(request, true);
      const req = decode(UpdateLogRequestSchema, enc, body);
      const ack = await svc.updateLog(
        runner,
        toNumber(req.taskId, 'task_id'),
        toNumber(req.index, 'index'),
        req.rows.map((r) => ({ timeMs: r.time ? timestampMs(r.time) : Date.now(), content: r.content })),
        req.noMore,
      );
      return encode(UpdateLogResponseSchema, enc, create(UpdateLogResponseSchema, { ackIndex: BigInt(ack) }));
    },
  };

  const pingMethods: Record<string, Method> = {
    async Ping(_request, body, enc) {
      const req = decode(PingRequestSchema, enc, body);
      return encode(PingResponseSchema, enc, create(PingResponseSchema, { data: `Hello, ${req.data}!` }));
    },
  };

  const serve = (service: string, methods: Record<string, Method>) =>
    app.post<{ Params: { method: string } }>(
      `/api/actions/${service}/:method`,
      { schema: { hide: true } },
      async (request, reply) => {
        if (!deps.enabled) {
          throw new ConnectError(
            'not_found',
            'Actions are disabled on this server ([actions] ENABLED = false)',
            404,
          );
        }
        const method = Object.hasOwn(methods, request.params.method)
          ? methods[request.params.method]
          : undefined;
        if (!method)
          throw new ConnectError(
            'unimplemented',
            `${service}/${request.params.method} is not implemented`,
            404,
          );
        const enc = encodingOf(request.headers['content-type']);
        if (!enc) {
          reply.header('accept-post', 'application/json, application/proto');
          throw new ConnectError(
            'unknown',
            'the content type must be application/proto or application/json',
            415,
          );
        }
        let body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const encoding = String(request.headers['content-encoding'] ?? 'identity').toLowerCase();
        if (encoding === 'gzip') {
          try {
            body = await gunzip(body, { maxOutputLength: MAX_BODY });
          } catch {
            throw new ConnectError('invalid_argument', 'the gzip body could not be inflated');
          }
        } else if (encoding !== 'identity') {
          throw new ConnectError('unimplemented', `unsupported content encoding: ${encoding}`);
        }
        const out = await method(request, body, enc);
        return reply.code(200).type(CONTENT_TYPE[enc]).send(out);
      },
    );

  serve('runner.v1.RunnerService', runnerMethods);
  serve('ping.v1.PingService', pingMethods);
}
