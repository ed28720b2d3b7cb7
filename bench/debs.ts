// Small .deb packages for the Debian benchmarks, laid out as dpkg-deb lays one out (an ar
// archive of debian-binary, control.tar.gz and data.tar.gz), made in memory.
import zlib from 'node:zlib';
import tar from 'tar-stream';

async function tgz(members: Record<string, string>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(members)) pack.entry({ name }, Buffer.from(content));
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack.pipe(zlib.createGzip())) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function arMember(name: string, data: Buffer): Buffer {
  const header = Buffer.alloc(60, ' ');
  header.write(name, 0, 'latin1');
  header.write('0', 16);
  header.write('0', 28);
  header.write('0', 34);
  header.write('100644', 40);
  header.write(String(data.length), 48);
  header.write('`\n', 58, 'latin1');
  return Buffer.concat([header, data, data.length % 2 ? Buffer.from('\n') : Buffer.alloc(0)]);
}

/** The control stanza of `name` 1.0 (amd64), without its final newline. */
export const control = (name: string): string =>
  `Package: ${name}\nVersion: 1.0\nArchitecture: amd64\nMaintainer: Bench <bench@example.com>\n` +
  `Depends: libc6 (>= 2.17)\nDescription: package ${name}\n a benchmark package`;

/** A small .deb of `name` 1.0 (amd64). */
export async function deb(name: string): Promise<Buffer> {
  return Buffer.concat([
    Buffer.from('!<arch>\n'),
    arMember('debian-binary', Buffer.from('2.0\n')),
    arMember('control.tar.gz', await tgz({ './control': `${control(name)}\n` })),
    arMember('data.tar.gz', await tgz({ [`./usr/share/${name}/README`]: `${name}\n`.repeat(50) })),
  ]);
}
