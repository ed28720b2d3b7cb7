// Encryption of secrets kept in the database (mirror credentials, actions secrets): AES-256-GCM
// with a key derived by HKDF-SHA256 from [security] SECRET_KEY. Each purpose derives its own key
// and binds the ciphertext to it, so a value stored for one purpose never decrypts as another.
//
// Stored form: "v1:" + base64url(12-byte nonce | 16-byte tag | ciphertext).
import crypto from 'node:crypto';

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  private readonly key: Buffer;

  /**
   * `secretKey` is [security] SECRET_KEY; `purpose` names what is kept ("mirror-credentials",
   * "actions-secrets") and separates the keys.
   */
  constructor(
    secretKey: string,
    private readonly purpose: string,
  ) {
    if (!secretKey) throw new Error('[security] SECRET_KEY is not set: secrets cannot be encrypted');
    this.key = Buffer.from(
      crypto.hkdfSync('sha256', secretKey, 'anvil-secret-box', `anvil:${VERSION}:${purpose}`, 32),
    );
  }

  encrypt(plain: string): string {
    const nonce = crypto.randomBytes(NONCE_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(this.purpose));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** The plain text; throws when the value was not made by this key and purpose or was altered. */
  decrypt(stored: string): string {
    const [version, data] = stored.split(':', 2);
    if (version !== VERSION || data === undefined) throw new Error('unknown secret format');
    const raw = Buffer.from(data, 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new Error('secret is truncated');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(this.purpose));
    decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  }
}
