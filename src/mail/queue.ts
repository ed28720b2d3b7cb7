// The durable outgoing mail queue and its worker. Messages are rows of mail_queue, written by the
// request that causes them (mail/service.ts `enqueue`) and sent off the request path by the worker
// `anvil web` starts: a few at a time, each retried with exponential back-off up to
// [mailer] MAX_ATTEMPTS. Several processes on one database share the queue: a batch is claimed by
// moving its rows' next attempt past a lease (PostgreSQL skips rows another process is claiming),
// and an outcome is recorded only while the claim holds, so a message is sent by one process;
// rows a stopped process left pending (or claimed) are sent by the next one.
import type { Logger } from 'pino';
import type { MailerConfig } from '../config/config.js';
import { nowUnix, type Db, type Dialect } from '../db/database.js';
import type { MailSender, OutgoingMail } from './sender.js';
import * as store from './store.js';
import { MailStatus, type MailRow, type NewMailRow } from './tables.js';

/** How often the worker looks for messages it was not told about (other processes, retries). */
const POLL_MS = 5_000;
/** Messages claimed at once. */
const BATCH = 5;
/** Seconds one message may take to send (the SMTP timeouts of sender.ts). */
const SEND_SECONDS = 30;
/** Sent and given-up messages are kept this long, then pruned (hourly). */
const KEEP_SECONDS = 7 * 86400;
const PRUNE_MS = 3_600_000;

export interface MailQueueDeps {
  db: Db;
  dialect: Dialect;
  log: Logger;
  settings: Pick<MailerConfig, 'enabled' | 'maxAttempts' | 'retryDelay'>;
  /** [cluster] LEASE_TIME in seconds: how long a claim of a dead process holds. */
  leaseSeconds: number;
  /** Made when the worker starts (tests give their own). */
  sender: () => MailSender;
}

export class MailQueue {
  private readonly db: Db;
  private running = false;
  private pumping = false;
  private again = false;
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private sender: MailSender | undefined;

  constructor(private readonly deps: MailQueueDeps) {
    this.db = deps.db;
  }

  /** Whether mail is sent at all ([mailer] ENABLED). */
  get enabled(): boolean {
    return this.deps.settings.enabled;
  }

  /** The rows of messages to queue, due now. */
  static rows(mails: OutgoingMail[], now = nowUnix()): NewMailRow[] {
    return mails.map((m) => ({
      recipient: m.to,
      subject: m.subject,
      headers: JSON.stringify(m.headers),
      body_text: m.text,
      body_html: m.html,
      next_attempt_unix: now,
      last_error: '',
      created_unix: now,
    }));
  }

  /** Queues messages (nothing when mail is off) and wakes the worker. */
  async enqueue(mails: OutgoingMail[]): Promise<void> {
    if (!this.enabled || mails.length === 0) return;
    await store.insertMails(this.db, MailQueue.rows(mails));
    this.wake();
  }

  /** Tells the worker that messages were queued (by `enqueue` or inside another transaction). */
  wake(): void {
    if (this.running) this.pump();
  }

  /** Starts sending (anvil web): messages left pending by an earlier run go first. */
  start(): void {
    if (this.running || !this.enabled) return;
    this.running = true;
    this.sender = this.deps.sender();
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_MS);
    this.pruneTimer.unref();
    this.pump();
  }

  /** Stops taking messages and waits for the one under way. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    clearInterval(this.pruneTimer);
    await this.work;
    this.sender?.close();
    this.sender = undefined;
  }

  private pump(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.again = false;
    this.work = this.drain()
      .catch((err: unknown) => this.deps.log.error({ err }, 'mail queue failed'))
      .finally(() => {
        this.pumping = false;
        if (this.again) this.pump();
        else this.schedule();
      });
  }

  /** Claims and sends due messages until none is left (or the worker stops). */
  private async drain(): Promise<void> {
    while (this.running) {
      const now = nowUnix();
      const lease = now + BATCH * SEND_SECONDS + this.deps.leaseSeconds;
      const batch = await store.claimDue(this.db, now, BATCH, lease, this.deps.dialect === 'postgres');
      if (batch.length === 0) return;
      batch.sort((a, b) => a.id - b.id);
      for (let i = 0; i < batch.length; i++) {
        if (!this.running) {
          // Claimed but not tried: due again at once for the next server.
          await store.release(
            this.db,
            batch.slice(i).map((m) => m.id),
            nowUnix(),
          );
          return;
        }
        await this.attempt(batch[i]!, lease);
      }
    }
  }

  /** Wakes up for the earliest pending message (a retry), or polls for other processes'. */
  private schedule(): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    void store
      .nextDue(this.db)
      .then((next) => {
        if (!this.running) return;
        let wait = POLL_MS;
        if (next !== undefined) wait = Math.min(wait, Math.max(0, next * 1000 - Date.now()));
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.pump(), wait);
        this.timer.unref();
      })
      .catch((err: unknown) => this.deps.log.error({ err }, 'mail queue failed'));
  }

  private async attempt(mail: MailRow, lease: number): Promise<void> {
    const { maxAttempts, retryDelay } = this.deps.settings;
    let error = '';
    try {
      await this.sender!.send({
        to: mail.recipient,
        subject: mail.subject,
        headers: JSON.parse(mail.headers) as Record<string, string>,
        text: mail.body_text,
        html: mail.body_html,
      });
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    const attempts = mail.attempts + 1;
    const now = nowUnix();
    const done = !error || attempts >= maxAttempts;
    const delay = retryDelay * 2 ** (attempts - 1);
    const kept = await store.finish(this.db, mail.id, lease, {
      status: !error ? MailStatus.sent : done ? MailStatus.failed : MailStatus.pending,
      attempts,
      next_attempt_unix: done ? now : now + Math.max(1, Math.ceil(delay)),
      last_error: error.slice(0, 1000),
      sent_unix: error ? 0 : now,
    });
    if (!kept) this.deps.log.warn({ mail: mail.id }, 'a mail was claimed by another process while sent');
    if (error) {
      this.deps.log[done ? 'warn' : 'info'](
        { mail: mail.id, attempts, finished: done },
        `sending mail failed${done ? ', giving up' : ''}: ${error.slice(0, 200)}`,
      );
    }
  }

  private async prune(): Promise<void> {
    try {
      await store.prune(this.db, nowUnix() - KEEP_SECONDS);
      await store.deleteExpiredCodes(this.db, nowUnix());
    } catch (err) {
      this.deps.log.error({ err }, 'pruning the mail queue failed');
    }
  }
}
