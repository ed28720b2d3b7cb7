// Errors of the artifact service that name the code its protocols answer with.
import { AppError, type ErrorKind } from '../errors.js';

/**
 * An AppError that also names the code to answer with where the protocol has its own codes:
 * Twirp's (`twirp`, instead of the one its kind maps to) or Azure Blob's (`azure`, in
 * x-ms-error-code on the signed URLs).
 */
export class ArtifactError extends AppError {
  constructor(
    kind: ErrorKind,
    message: string,
    readonly codes: { twirp?: string; azure?: string },
  ) {
    super(kind, message);
  }
}

/** A client's text, cut for a message. */
export function clip(s: string): string {
  return s.length > 64 ? `${s.slice(0, 64)}...` : s;
}
