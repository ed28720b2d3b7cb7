// The Prometheus metrics of one process ([metrics] ENABLED): requests by route, status and
// duration, git operations by service and transport, background job runs by outcome, webhook
// deliveries by outcome, and, read at each scrape, queue depths and the counts Forgejo exports
// (gitea_users, gitea_repositories, ...), plus Node's process metrics. While metrics are
// disabled every recording method returns at once, and prom-client is not even loaded (it is read
// from node_modules when metrics are on, not bundled into what every server parses at start-up).
import type Client from 'prom-client';
import { lazyModule } from '../lazy.js';

const promClient = lazyModule<typeof Client>('prom-client');

/** Numbers read from the database at scrape time. */
export interface Gauges {
  queues(): Promise<Record<string, number>>;
  counts(): Promise<Record<string, number>>;
}

export interface MetricsDeps {
  /** [metrics] ENABLED: while false every recording method returns at once. */
  enabled: boolean;
  /** The queue depths and counts read at each scrape (ops/service.ts), if any. */
  gauges?: Gauges | undefined;
}

export class Metrics {
  /** The registry scraped; none while metrics are disabled. */
  readonly registry?: Client.Registry;
  private readonly requests?: Client.Counter<'method' | 'route' | 'status'>;
  private readonly durations?: Client.Histogram<'method' | 'route'>;
  private readonly gitOps?: Client.Counter<'service' | 'transport'>;
  private readonly jobs?: Client.Counter<'job' | 'outcome'>;
  private readonly jobSeconds?: Client.Histogram<'job'>;
  private readonly deliveries?: Client.Counter<'outcome'>;

  readonly enabled: boolean;

  constructor(deps: MetricsDeps) {
    const { enabled, gauges } = deps;
    this.enabled = enabled;
    if (!enabled) return;
    const client = promClient();
    this.registry = new client.Registry();
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry });
    this.requests = new client.Counter({
      name: 'anvil_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.durations = new client.Histogram({
      name: 'anvil_http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.gitOps = new client.Counter({
      name: 'anvil_git_operations_total',
      help: 'Git operations served, by service (upload-pack, receive-pack) and transport',
      labelNames: ['service', 'transport'],
      registers,
    });
    this.jobs = new client.Counter({
      name: 'anvil_background_job_runs_total',
      help: 'Runs of background tasks, by task and outcome (success, failure)',
      labelNames: ['job', 'outcome'],
      registers,
    });
    this.jobSeconds = new client.Histogram({
      name: 'anvil_background_job_duration_seconds',
      help: 'Duration of background task runs',
      labelNames: ['job'],
      buckets: [0.01, 0.1, 0.5, 1, 5, 30, 120, 600],
      registers,
    });
    this.deliveries = new client.Counter({
      name: 'anvil_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome (success, failure)',
      labelNames: ['outcome'],
      registers,
    });
    if (!gauges) return;
    new client.Gauge({
      name: 'anvil_queue_depth',
      help: 'Work waiting: webhook deliveries not yet delivered, actions jobs waiting for a runner',
      labelNames: ['queue'],
      registers,
      async collect() {
        for (const [queue, n] of Object.entries(await gauges.queues())) this.set({ queue }, n);
      },
    });
    // One query for all of them per scrape: the gauges are collected together, and share it.
    let pending: Promise<Record<string, number>> | undefined;
    const counts = () =>
      (pending ??= gauges.counts().finally(() => {
        pending = undefined;
      }));
    for (const [name, help] of Object.entries(FORGEJO_GAUGES)) {
      new client.Gauge({
        name: `gitea_${name}`,
        help,
        registers,
        async collect() {
          this.set((await counts())[name] ?? 0);
        },
      });
    }
  }

  request(method: string, route: string, status: number, seconds: number): void {
    if (!this.enabled) return;
    this.requests!.inc({ method, route, status: String(status) });
    this.durations!.observe({ method, route }, seconds);
  }

  gitOperation(service: string, transport: 'http' | 'ssh'): void {
    this.gitOps?.inc({ service: service.replace(/^git-/, ''), transport });
  }

  jobRun(job: string, ok: boolean, seconds: number): void {
    if (!this.enabled) return;
    this.jobs!.inc({ job, outcome: ok ? 'success' : 'failure' });
    this.jobSeconds!.observe({ job }, seconds);
  }

  delivery(ok: boolean): void {
    this.deliveries?.inc({ outcome: ok ? 'success' : 'failure' });
  }

  /** The text exposition format. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    if (!this.registry) return { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' };
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** Forgejo's statistics gauges (a subset), under Forgejo's names so dashboards keep working. */
export const FORGEJO_GAUGES = {
  users: 'Number of Users',
  organizations: 'Number of Organizations',
  repositories: 'Number of Repositories',
  issues: 'Number of Issues',
  releases: 'Number of Releases',
  webhooks: 'Number of Webhooks',
} as const;
