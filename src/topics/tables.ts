// Tables of repository topics (see db/migrations/0024_topics.ts).
import type { Generated, Selectable } from 'kysely';

export interface TopicTable {
  id: Generated<number>;
  name: string;
  /** Repositories carrying the topic, kept with every change. */
  repo_count: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

export interface RepoTopicTable {
  repo_id: number;
  topic_id: number;
}

export interface TopicTables {
  topic: TopicTable;
  repo_topic: RepoTopicTable;
}

export type TopicRow = Selectable<TopicTable>;
