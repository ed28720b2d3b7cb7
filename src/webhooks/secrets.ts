// The secrets of webhooks (the HMAC secret and the authorization header) are stored encrypted
// with [security] SECRET_KEY; the box is made on first use, so a site without the key runs until
// a hook needs one.
import { SecretBox } from '../auth/secrets.js';

export class HookSecrets {
  private box: SecretBox | undefined;

  constructor(private readonly secretKey: string) {}

  private open(): SecretBox {
    this.box ??= new SecretBox(this.secretKey, 'webhook-secrets');
    return this.box;
  }

  seal(plain: string): string {
    return plain ? this.open().encrypt(plain) : '';
  }

  unseal(stored: string): string {
    return stored ? this.open().decrypt(stored) : '';
  }
}
