// openpgp is loaded when a key or a signature is first read, not at start-up: evaluating it costs
// some 20 MB of memory (most of it outside the JS heap) that a server nobody gives a GPG key
// never needs.
import type * as Openpgp from 'openpgp';

let loading: Promise<typeof Openpgp> | undefined;

/** The openpgp module, imported on the first call. */
export const loadOpenpgp = (): Promise<typeof Openpgp> => (loading ??= import('openpgp'));
