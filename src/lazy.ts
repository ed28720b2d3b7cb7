// Libraries a server may never need, loaded on first use from node_modules instead of bundled into
// what every process parses at start-up (esbuild bundles a call to `require` or a static import;
// a call through this loader it leaves alone). Each kept as its module once loaded.
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/** A getter for package `name`, loaded on its first call. */
export function lazyModule<T>(name: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= load(name) as T);
}
