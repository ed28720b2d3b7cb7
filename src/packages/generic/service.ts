// The generic format's rules: names, versions and file names, as Forgejo checks them. A name is
// letters, digits, `-`, `_`, `+` and `.`, but neither `..` nor a single character other than a
// letter or digit (`.`, `-`); a file name may hold more punctuation and spaces, but not at its
// ends, and is neither `.` nor `..`; a version has no space at its ends. Anvil also refuses a
// version with a slash, a backslash or a space inside, and `.` and `..` (clients remove those
// from URLs, so such a version could never be downloaded).
import { badRequest } from '../../errors.js';

const NAME = /^[-_+.\w]+$/;
const FILE_NAME = /^[-_+=:;.()[\]{}~!@#$%^& \w]+$/;

export function checkName(name: string): void {
  if (
    !NAME.test(name) ||
    name === '..' ||
    (name.length === 1 && !/^[a-zA-Z0-9]$/.test(name)) ||
    name.length > 255
  ) {
    throw badRequest(
      `invalid package name [name: ${name}]: letters, digits, -, _, + and . only, neither .. nor a lone symbol`,
    );
  }
}

export function checkVersion(version: string): void {
  if (
    !version ||
    version !== version.trim() ||
    version.length > 255 ||
    /[/\\\s]/.test(version) ||
    version === '.' ||
    version === '..'
  ) {
    throw badRequest(`invalid package version [version: ${version}]`);
  }
}

export function checkFileName(name: string): void {
  if (!FILE_NAME.test(name) || name !== name.trim() || name === '.' || name === '..' || name.length > 255) {
    throw badRequest(
      `invalid file name [name: ${name}]: letters, digits, spaces and -_+=:;.()[]{}~!@#$%^& only, not . or ..`,
    );
  }
}
