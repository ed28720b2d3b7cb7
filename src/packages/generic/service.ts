// The generic format's rules: names, versions and file names (Forgejo's).
import { badRequest } from '../../errors.js';

const NAME = /^[-_+.\w]+$/;

export function checkName(name: string): void {
  if (!NAME.test(name) || name.length > 255) {
    throw badRequest(`invalid package name [name: ${name}]: letters, digits, -, _, + and . only`);
  }
}

export function checkVersion(version: string): void {
  if (!version || version !== version.trim() || version.length > 255 || /[/\\\s]/.test(version)) {
    throw badRequest(`invalid package version [version: ${version}]`);
  }
}

export function checkFileName(name: string): void {
  if (!NAME.test(name) || name === '.' || name === '..' || name.length > 255) {
    throw badRequest(`invalid file name [name: ${name}]: letters, digits, -, _, + and . only`);
  }
}
