import type { Generated, Insertable, Selectable } from 'kysely';

/** A message in the outgoing queue (db/migrations/0043_mail.ts), one per recipient. */
export interface MailQueueTable {
  id: Generated<number>;
  recipient: string;
  subject: string;
  /** The extra headers as a JSON object (Message-ID, In-Reply-To, References, List-ID, X-Gitea-*). */
  headers: string;
  body_text: string;
  body_html: string;
  /** MailStatus. */
  status: Generated<number>;
  attempts: Generated<number>;
  /** When it is due; moved past a lease while a process sends it. */
  next_attempt_unix: number;
  last_error: string;
  created_unix: number;
  sent_unix: Generated<number>;
}

export const MailStatus = { pending: 0, sent: 1, failed: 2 } as const;

/** A single-use code mailed to a person: only its SHA-256 is stored. */
export interface MailCodeTable {
  id: Generated<number>;
  user_id: number;
  purpose: MailCodePurpose;
  code_hash: string;
  /** The address the code was sent to (an activation is for that address). */
  email: string;
  expires_unix: number;
  created_unix: number;
}

export type MailCodePurpose = 'reset_password' | 'activate';

/** Forgejo's values of user.email_notifications_preference. */
export const EMAIL_PREFERENCES = ['enabled', 'onmention', 'disabled', 'andyourown'] as const;
export type EmailPreference = (typeof EMAIL_PREFERENCES)[number];

export interface MailTables {
  mail_queue: MailQueueTable;
  mail_code: MailCodeTable;
}

export type MailRow = Selectable<MailQueueTable>;
export type NewMailRow = Insertable<MailQueueTable>;
export type MailCodeRow = Selectable<MailCodeTable>;
