// ssh2, loaded on first use rather than with Anvil: it brings a 16 MiB WebAssembly memory (its
// poly1305) that a server which never reads an SSH key or starts the built-in server should not
// carry.
import { createRequire } from 'node:module';

export type Ssh2 = typeof import('ssh2');

const require = createRequire(import.meta.url);
let loaded: Ssh2 | undefined;

export function ssh2(): Ssh2 {
  return (loaded ??= require('ssh2') as Ssh2);
}
