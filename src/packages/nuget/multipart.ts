// The first part of a multipart/form-data push, streamed. nuget.exe ends its file part with a bare
// LF before the closing delimiter (`\n--boundary--`), which strict parsers (busboy) refuse as an
// unfinished form; Forgejo's Go parser takes it, and so does this one: a CRLF or an LF before the
// delimiter ends the part.
import { Transform, type Readable } from 'node:stream';
import { badRequest } from '../../errors.js';

const MAX_HEADERS = 64 << 10;

/** The boundary of a multipart/form-data content type; undefined when it is none. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType)) return undefined;
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

/** The content of the first part of the multipart body `body`. */
export function firstPart(body: Readable, boundary: string): Readable {
  const delimiter = Buffer.from(`\n--${boundary}`);
  let head: Buffer | undefined = Buffer.alloc(0);
  let held = Buffer.alloc(0);
  let done = false;
  const part = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      if (done) return callback();
      if (head) {
        // The preamble, the first delimiter and the part's headers, up to the blank line.
        head = Buffer.concat([head, chunk]);
        let end = head.indexOf('\r\n\r\n');
        let skip = 4;
        const lf = head.indexOf('\n\n');
        if (lf >= 0 && (end < 0 || lf < end)) [end, skip] = [lf, 2];
        if (end < 0) {
          if (head.length > MAX_HEADERS) return callback(badRequest('malformed multipart body'));
          return callback();
        }
        if (!head.subarray(0, end).includes(`--${boundary}`)) {
          return callback(badRequest('malformed multipart body'));
        }
        chunk = head.subarray(end + skip);
        head = undefined;
      }
      const buf = Buffer.concat([held, chunk]);
      const at = buf.indexOf(delimiter);
      if (at >= 0) {
        done = true;
        this.push(buf.subarray(0, at > 0 && buf[at - 1] === 0x0d ? at - 1 : at));
        held = Buffer.alloc(0);
        return callback();
      }
      const keep = delimiter.length + 1;
      if (buf.length > keep) {
        this.push(buf.subarray(0, buf.length - keep));
        held = buf.subarray(buf.length - keep);
      } else held = buf;
      callback();
    },
    flush(callback) {
      if (!done) return callback(badRequest('malformed multipart body: the part does not end'));
      callback();
    },
  });
  body.on('error', (err) => part.destroy(err));
  // The reader sees the error; once it has given up on the part, no one else need.
  part.on('error', () => undefined);
  return body.pipe(part);
}
