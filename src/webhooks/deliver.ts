// Sending one delivery: the request Forgejo would send for the hook (method, content type, its
// X-Forgejo-*, X-Gitea-*, X-Gogs-*, X-Hub-* and X-GitHub-* headers, the HMAC signatures, the
// Authorization header), over node:http(s) with a timeout and only to allowed servers; and what
// came back, for the delivery history.
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { VERSION } from '../version.js';
import { eventName } from './events.js';
import { BlockedHostError, type HostList } from './hosts.js';
import { PLAIN_TYPES } from './types.js';

/** What a delivery needs of its hook (secrets decrypted). */
export interface DeliveryTarget {
  type: string;
  url: string;
  httpMethod: string;
  contentType: string;
  secret: string;
  authorization: string;
}

export interface DeliveryTask {
  uuid: string;
  eventType: string;
  payload: string;
}

export interface RequestRecord {
  url: string;
  http_method: string;
  headers: Record<string, string>;
}

export interface ResponseRecord {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Outcome {
  ok: boolean;
  /** 0 when no response came back. */
  status: number;
  /** Whether another attempt could help (false for a refused address or an unusable URL). */
  retryable: boolean;
  request: RequestRecord;
  response: ResponseRecord;
}

export interface DeliverOptions {
  hosts: HostList;
  timeoutMs: number;
  skipTlsVerify: boolean;
}

/** Bytes of a response read at most, and characters of its body kept in the history. */
const READ_LIMIT = 1 << 20;
export const BODY_KEEP = 16 * 1024;
const USER_AGENT = `Anvil-Webhook/${VERSION.anvil}`;

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
  httpsInsecure: new https.Agent({ keepAlive: true, maxSockets: 64, rejectUnauthorized: false }),
};

/** hex HMAC-SHA256 (and SHA1, for X-Hub-Signature) of `payload` with `secret`; '' without a secret. */
export function signatures(secret: string, payload: string): { sha256: string; sha1: string } {
  if (!secret) return { sha256: '', sha1: '' };
  return {
    sha256: crypto.createHmac('sha256', secret).update(payload).digest('hex'),
    sha1: crypto.createHmac('sha1', secret).update(payload).digest('hex'),
  };
}

/** Forgejo's transaction id of a matrix message: the SHA1 of its payload. */
function matrixTxnId(payload: string): string {
  return crypto.createHash('sha1').update(payload).digest('hex');
}

/**
 * The request for a delivery: URL, method, headers and body. Signatures cover the payload (for
 * form hooks, the value of the `payload` field), as Forgejo's do; packagist and SourceHut builds
 * requests carry neither Forgejo's headers nor signatures.
 */
export function buildRequest(
  target: DeliveryTarget,
  task: DeliveryTask,
): { url: URL; method: string; headers: Record<string, string>; body: string } {
  const url = new URL(target.url);
  const headers: Record<string, string> = { 'User-Agent': USER_AGENT };
  let method = target.httpMethod.toUpperCase() || 'POST';
  let body = '';
  if (method === 'GET') {
    url.searchParams.set('payload', task.payload);
  } else if (method === 'PUT') {
    // Matrix: the message goes to .../send/m.room.message/{txnId}.
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${encodeURIComponent(matrixTxnId(task.payload))}`;
    headers['Content-Type'] = 'application/json';
    body = task.payload;
  } else {
    method = 'POST';
    if (target.contentType === 'form') {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams({ payload: task.payload }).toString();
    } else {
      headers['Content-Type'] = 'application/json';
      body = task.payload;
    }
  }
  if (PLAIN_TYPES.has(target.type)) {
    if (target.authorization) headers['Authorization'] = target.authorization;
    return { url, method, headers, body };
  }
  const sig = signatures(target.secret, task.payload);
  const event = eventName(task.eventType);
  for (const prefix of ['X-Forgejo', 'X-Gitea', 'X-Gogs']) {
    headers[`${prefix}-Delivery`] = task.uuid;
    headers[`${prefix}-Event`] = event;
    headers[`${prefix}-Event-Type`] = task.eventType;
    headers[`${prefix}-Signature`] = sig.sha256;
  }
  headers['X-Hub-Signature'] = `sha1=${sig.sha1}`;
  headers['X-Hub-Signature-256'] = `sha256=${sig.sha256}`;
  headers['X-GitHub-Delivery'] = task.uuid;
  headers['X-GitHub-Event'] = event;
  headers['X-GitHub-Event-Type'] = task.eventType;
  if (target.authorization) headers['Authorization'] = target.authorization;
  return { url, method, headers, body };
}

/** The headers as recorded: the Authorization header masked (its scheme kept, as Forgejo keeps it). */
function recorded(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  const auth = out['Authorization'];
  if (auth !== undefined) {
    const scheme = /^(Bearer|Basic) /.exec(auth);
    out['Authorization'] = scheme ? `${scheme[1]} ******` : '******';
  }
  return out;
}

function flatHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(',') : v;
  }
  return out;
}

/** Sends one delivery; never throws: every failure becomes an unsuccessful outcome. */
export async function deliver(
  target: DeliveryTarget,
  task: DeliveryTask,
  opts: DeliverOptions,
): Promise<Outcome> {
  let req: ReturnType<typeof buildRequest>;
  try {
    req = buildRequest(target, task);
  } catch (err) {
    return failure({ url: target.url, http_method: target.httpMethod, headers: {} }, err, false);
  }
  const request: RequestRecord = {
    url: req.url.toString(),
    http_method: req.method,
    headers: recorded(req.headers),
  };
  const isHttps = req.url.protocol === 'https:';
  if (!isHttps && req.url.protocol !== 'http:') {
    return failure(request, new Error(`unsupported URL scheme ${req.url.protocol}`), false);
  }
  try {
    opts.hosts.checkLiteral(req.url.hostname);
  } catch (err) {
    return failure(request, err, false);
  }
  const body = Buffer.from(req.body);
  const headers = { ...req.headers };
  if (req.method !== 'GET') headers['Content-Length'] = String(body.length);
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    let r: http.ClientRequest | undefined;
    const timer = setTimeout(() => {
      r?.destroy(new Error(`timed out after ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    const done = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const options: https.RequestOptions = {
      method: req.method,
      headers,
      lookup: opts.hosts.lookup(),
      agent: isHttps ? (opts.skipTlsVerify ? agents.httpsInsecure : agents.https) : agents.http,
    };
    try {
      r = (isHttps ? https : http).request(req.url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < READ_LIMIT) chunks.push(c);
          size += c.length;
        });
        res.on('error', (err) => done(failure(request, err, true)));
        // After 'end' this changes nothing; before it, the response was cut short.
        res.on('close', () =>
          done(failure(request, new Error('the connection closed before the response ended'), true)),
        );
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          done({
            ok: status >= 200 && status < 300,
            status,
            retryable: true,
            request,
            response: { status, headers: flatHeaders(res.headers), body: truncate(text) },
          });
        });
      });
    } catch (err) {
      // An unusable header value, for example: nothing was sent, and nothing will change that.
      return done(failure(request, err, false));
    }
    r.on('error', (err) => done(failure(request, err, !(err instanceof BlockedHostError))));
    r.end(req.method === 'GET' ? undefined : body);
  });
}

function truncate(text: string): string {
  return text.length > BODY_KEEP ? `${text.slice(0, BODY_KEEP)}… (truncated)` : text;
}

function failure(request: RequestRecord, err: unknown, retryable: boolean): Outcome {
  const message = err instanceof Error ? err.message : String(err);
  return {
    ok: false,
    status: 0,
    retryable,
    request,
    response: { status: 0, headers: {}, body: `Delivery: ${message}` },
  };
}
