// Repository topics: Forgejo's name rule (lower case letters, digits, '-' and '.', starting with a
// letter or digit, at most 35 characters; names are trimmed and lower-cased first), at most 25 per
// repository, counts kept in the writing transaction, search by name.
import { nowUnix, transaction, type Db } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Page } from '../http/pagination.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import * as store from './store.js';

const TOPIC = /^[a-z0-9][-.a-z0-9]*$/;
export const MAX_TOPICS = 25;

/** Trimmed, lower-cased names, each once. */
const normalize = (names: string[]) => [...new Set(names.map((n) => n.trim().toLowerCase()).filter(Boolean))];

export const isValidTopic = (name: string) => name.length <= 35 && TOPIC.test(name);

export interface TopicServiceDeps {
  db: Db;
  /** A repository's deletion takes it out of its topics' counts. */
  repos: Pick<RepoService, 'addHooks'>;
}

export class TopicService {
  private readonly db: Db;

  constructor(deps: TopicServiceDeps) {
    this.db = deps.db;
    // A deleted repository's topics lose it from their counts (and go when no repository is left).
    deps.repos.addHooks({ beforeDelete: (tx, repo) => store.replace(tx, repo.id, [], nowUnix()) });
  }

  namesOf(repoIds: number[]): Promise<Map<number, string[]>> {
    return store.namesOf(this.db, repoIds);
  }

  async list(repo: RepoRow): Promise<string[]> {
    return (await this.namesOf([repo.id])).get(repo.id) ?? [];
  }

  /** Makes `names` the repository's topics: 422 naming the invalid ones, or for more than 25. */
  async replace(repo: RepoRow, names: string[]): Promise<void> {
    const topics = normalize(names);
    const invalid = topics.filter((t) => !isValidTopic(t));
    if (invalid.length) {
      throw new AppError('invalid', 'invalid topics', { invalidTopics: invalid });
    }
    if (topics.length > MAX_TOPICS) {
      throw new AppError('invalid', 'Exceeding maximum number of topics per repo', { invalidTopics: [] });
    }
    await transaction(this.db, (tx) => store.replace(tx, repo.id, topics.sort(), nowUnix()));
  }

  async add(repo: RepoRow, name: string): Promise<void> {
    const topic = name.trim().toLowerCase();
    if (!isValidTopic(topic))
      throw new AppError('invalid', `${topic} is not a valid topic`, { invalidTopics: [topic] });
    const current = await this.list(repo);
    if (current.includes(topic)) return;
    if (current.length >= MAX_TOPICS) {
      throw new AppError('invalid', 'Exceeding maximum allowed topics per repo.', { invalidTopics: [] });
    }
    await this.replace(repo, [...current, topic]);
  }

  async remove(repo: RepoRow, name: string): Promise<void> {
    const topic = name.trim().toLowerCase();
    if (!isValidTopic(topic))
      throw new AppError('invalid', `${topic} is not a valid topic`, { invalidTopics: [topic] });
    const current = await this.list(repo);
    if (!current.includes(topic)) return;
    await this.replace(
      repo,
      current.filter((t) => t !== topic),
    );
  }

  search(keyword: string, page: Page) {
    return store.search(this.db, keyword.trim(), page.limit, page.offset);
  }
}
