// The client side of the runner protocol for `anvil runner`: connect-rpc unary calls with binary
// protobuf bodies, as every runner sends them, to {instance}/api/actions/runner.v1.RunnerService/*.
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
import {
  DeclareRequestSchema,
  DeclareResponseSchema,
  FetchTaskRequestSchema,
  FetchTaskResponseSchema,
  RegisterRequestSchema,
  RegisterResponseSchema,
  UpdateLogRequestSchema,
  UpdateLogResponseSchema,
  UpdateTaskRequestSchema,
  UpdateTaskResponseSchema,
} from './gen/runner/v1/messages_pb.js';

export class RunnerClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'RunnerClientError';
  }
}

export interface RunnerCredentials {
  uuid: string;
  token: string;
}

export class RunnerClient {
  private readonly base: string;

  constructor(
    instance: string,
    private readonly credentials?: RunnerCredentials,
    private readonly timeoutMs = 60_000,
  ) {
    this.base = `${instance.replace(/\/+$/, '')}/api/actions/runner.v1.RunnerService`;
  }

  private async call<I extends DescMessage, O extends DescMessage>(
    method: string,
    input: I,
    output: O,
    msg: MessageInitShape<I>,
  ): Promise<MessageShape<O>> {
    const headers: Record<string, string> = {
      'content-type': 'application/proto',
      'connect-protocol-version': '1',
    };
    if (this.credentials) {
      headers['x-runner-uuid'] = this.credentials.uuid;
      headers['x-runner-token'] = this.credentials.token;
    }
    let res: Response;
    try {
      res = await fetch(`${this.base}/${method}`, {
        method: 'POST',
        headers,
        body: toBinary(input, create(input, msg)),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new RunnerClientError('unavailable', `cannot reach ${this.base}: ${(err as Error).message}`, 0);
    }
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) {
      let code = 'unknown';
      let message = `${method} failed with HTTP ${res.status}`;
      try {
        const e = JSON.parse(body.toString('utf8')) as { code?: string; message?: string };
        code = e.code ?? code;
        message = e.message ?? message;
      } catch {
        // not a Connect error body
      }
      throw new RunnerClientError(code, message, res.status);
    }
    return fromBinary(output, body);
  }

  register(msg: MessageInitShape<typeof RegisterRequestSchema>) {
    return this.call('Register', RegisterRequestSchema, RegisterResponseSchema, msg);
  }

  declare(msg: MessageInitShape<typeof DeclareRequestSchema>) {
    return this.call('Declare', DeclareRequestSchema, DeclareResponseSchema, msg);
  }

  fetchTask(msg: MessageInitShape<typeof FetchTaskRequestSchema>) {
    return this.call('FetchTask', FetchTaskRequestSchema, FetchTaskResponseSchema, msg);
  }

  updateTask(msg: MessageInitShape<typeof UpdateTaskRequestSchema>) {
    return this.call('UpdateTask', UpdateTaskRequestSchema, UpdateTaskResponseSchema, msg);
  }

  updateLog(msg: MessageInitShape<typeof UpdateLogRequestSchema>) {
    return this.call('UpdateLog', UpdateLogRequestSchema, UpdateLogResponseSchema, msg);
  }
}
