// Uploaded avatars of accounts (people and organizations) and repositories. The image arrives as
// base64; it must be a PNG, JPEG, GIF or WebP within [picture] AVATAR_MAX_FILE_SIZE bytes and
// AVATAR_MAX_WIDTH x AVATAR_MAX_HEIGHT pixels. It is stored once per content (the SHA-256 of its
// bytes is its key and what the row records); blobs no row shows any more are left to the sweep of
// orphaned blobs (storage/sweep.ts), so an image two owners share is never removed under one.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { Config } from '../config/config.js';
import { nowUnix, type Db } from '../db/database.js';
import { AppError, fieldLabel, invalidField, notFound } from '../errors.js';
import type { RepoRow } from '../repos/tables.js';
import type { BlobStore } from '../storage/storage.js';
import type { BlobReferences } from '../storage/sweep.js';
import type { UserRow } from '../users/tables.js';
import { imageInfo, type ImageInfo } from './image.js';
import * as store from './store.js';

/** Keys of stored avatars: the hex SHA-256 of the image. */
export const AVATAR_HASH = /^[0-9a-f]{64}$/;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export interface AvatarServiceDeps {
  db: Db;
  /** The avatars' blob store (keys are content hashes). */
  blobs: BlobStore;
  /** The sweep of orphaned blobs: the avatars rows reference are added here. */
  blobReferences: BlobReferences[];
  /** [picture] AVATAR_MAX_FILE_SIZE, AVATAR_MAX_WIDTH, AVATAR_MAX_HEIGHT */
  picture: Config['picture'];
}

export class AvatarService {
  private readonly db: Db;

  constructor(private readonly deps: AvatarServiceDeps) {
    const db = (this.db = deps.db);
    deps.blobReferences.push({
      label: 'avatars',
      store: 'avatars',
      prefix: '',
      referenced: (keys) => store.referenced(db, keys),
    });
  }

  /** Stores the base64 `image` after checking it; its hash. 422 (413 when too large) naming `image`. */
  private async save(image: string): Promise<string> {
    const text = image.replace(/\s+/g, '');
    if (text === '' || !BASE64.test(text)) throw invalidField('image', 'is not valid base64');
    const data = Buffer.from(text, 'base64');
    const max = this.deps.picture;
    if (data.length > max.avatarMaxFileSize) {
      throw new AppError(
        'payload_too_large',
        `[${fieldLabel('image')}]: the image is ${data.length} bytes, more than the ${max.avatarMaxFileSize} allowed`,
      );
    }
    const info = imageInfo(data);
    if (!info) throw invalidField('image', 'is not a PNG, JPEG, GIF or WebP image');
    if (info.width > max.avatarMaxWidth || info.height > max.avatarMaxHeight) {
      throw invalidField(
        'image',
        `the image is ${info.width}x${info.height} pixels, larger than the ${max.avatarMaxWidth}x${max.avatarMaxHeight} allowed`,
      );
    }
    const hash = crypto.createHash('sha256').update(data).digest('hex');
    // Written again even when present: that renews it for the sweep, which spares recent blobs.
    await this.deps.blobs.put(hash, Readable.from([data]));
    return hash;
  }

  async setUser(user: UserRow, image: string): Promise<void> {
    const hash = await this.save(image);
    await store.setUserAvatar(this.db, user.id, hash, nowUnix());
  }

  async deleteUser(user: UserRow): Promise<void> {
    await store.setUserAvatar(this.db, user.id, '', nowUnix());
  }

  async setRepo(repo: RepoRow, image: string): Promise<void> {
    const hash = await this.save(image);
    await store.setRepoAvatar(this.db, repo.id, hash);
  }

  async deleteRepo(repo: RepoRow): Promise<void> {
    await store.setRepoAvatar(this.db, repo.id, '');
  }

  /** A stored avatar's bytes and what it is; 404 when there is none by that hash. */
  async open(hash: string): Promise<{ data: Buffer; info: ImageInfo }> {
    if (!AVATAR_HASH.test(hash)) throw notFound('no such avatar');
    const chunks: Buffer[] = [];
    for await (const chunk of await this.deps.blobs.open(hash)) chunks.push(chunk as Buffer);
    const data = Buffer.concat(chunks);
    const info = imageInfo(data);
    if (!info) throw notFound('no such avatar');
    return { data, info };
  }
}
