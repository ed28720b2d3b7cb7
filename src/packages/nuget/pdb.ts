// Portable PDB files in a NuGet symbols package (.snupkg): the id a debugger asks the symbol
// server for is the GUID at the start of the metadata's `#Pdb` stream (ECMA-335 II.24.2.1 metadata
// root: "BSJB", version, stream headers). What a .snupkg may hold besides its .pdb files is
// Forgejo's list; anything else is refused.
import { badRequest } from '../../errors.js';

const MAGIC = 0x424a5342; // "BSJB"

/** The PDB id (the `#Pdb` stream's GUID as 32 lower-case hex digits, in GUID text order). */
export function portablePdbId(b: Buffer): string {
  const bad = (why: string) => badRequest(`invalid portable PDB: ${why}`);
  if (b.length < 20 || b.readUInt32LE(0) !== MAGIC) throw bad('bad magic number');
  const versionLength = b.readUInt32LE(12);
  let at = 16 + versionLength;
  if (versionLength > 255 || at + 4 > b.length) throw bad('bad version string');
  at += 2; // flags
  const streams = b.readUInt16LE(at);
  at += 2;
  for (let i = 0; i < streams; i++) {
    if (at + 8 > b.length) throw bad('stream headers cut off');
    const offset = b.readUInt32LE(at);
    at += 8; // offset, size
    const end = b.indexOf(0, at);
    if (end < 0 || end - at > 32) throw bad('bad stream name');
    const name = b.toString('latin1', at, end);
    at += Math.ceil((end - at + 1) / 4) * 4;
    if (name !== '#Pdb') continue;
    if (offset + 16 > b.length) throw bad('#Pdb stream cut off');
    const g = b.subarray(offset, offset + 16);
    const hex = (x: Buffer) => x.toString('hex');
    // Data1..3 are little-endian numbers; Data4 is bytes.
    return (
      g.readUInt32LE(0).toString(16).padStart(8, '0') +
      g.readUInt16LE(4).toString(16).padStart(4, '0') +
      g.readUInt16LE(6).toString(16).padStart(4, '0') +
      hex(g.subarray(8, 16))
    );
  }
  throw bad('no #Pdb stream');
}

/** Files a symbols package may hold besides its .pdb files (the package's own bookkeeping). */
const BOOKKEEPING = ['.nuspec', '.xml', '.psmdcp', '.rels', '.p7s'];

/** What to do with a member of a .snupkg: keep it (a .pdb), pass it over, or refuse the package. */
export function symbolsMember(name: string): 'pdb' | 'skip' | 'invalid' {
  if (name.endsWith('/')) return 'skip';
  const base = name.split('/').pop() ?? '';
  const dot = base.lastIndexOf('.');
  const ext = dot >= 0 ? base.slice(dot).toLowerCase() : '';
  if (ext === '.pdb') return 'pdb';
  return BOOKKEEPING.includes(ext) ? 'skip' : 'invalid';
}
