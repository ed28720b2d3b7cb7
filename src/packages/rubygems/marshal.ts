// Ruby's Marshal format (version 4.8), written: what RubyGems' index files hold
// (specs.4.8.gz: arrays of [name, Gem::Version, platform]; quick/Marshal.4.8/*.gemspec.rz: a
// Gem::Specification). Only what those need: nil, booleans, integers, UTF-8 strings, symbols,
// arrays, hashes, objects with instance variables ('o'), user-marshalled objects ('U', as
// Gem::Version and Gem::Requirement dump themselves) and user-defined dumps ('u', as
// Gem::Specification's _dump).

export type RubyValue =
  | null
  | boolean
  | number
  | string
  | RubySymbol
  | RubyValue[]
  | RubyHash
  | RubyObject
  | RubyUserMarshal
  | RubyUserDump;

export class RubySymbol {
  constructor(readonly name: string) {}
}
export class RubyHash {
  constructor(readonly entries: Array<[RubyValue, RubyValue]>) {}
}
/** An object of `className` with instance variables (names without `@`). */
export class RubyObject {
  constructor(
    readonly className: string,
    readonly ivars: Array<[string, RubyValue]>,
  ) {}
}
/** An object whose class defines marshal_dump: its class and the value it dumps. */
export class RubyUserMarshal {
  constructor(
    readonly className: string,
    readonly value: RubyValue,
  ) {}
}
/** An object whose class defines _dump: its class and the bytes it dumps. */
export class RubyUserDump {
  constructor(
    readonly className: string,
    readonly bytes: Buffer,
  ) {}
}

export const sym = (name: string) => new RubySymbol(name);

class Writer {
  private readonly parts: Buffer[] = [];
  private readonly symbols = new Map<string, number>();

  byte(b: number) {
    this.parts.push(Buffer.from([b]));
  }

  /** Marshal's integer encoding (w_long). */
  long(n: number) {
    if (n === 0) return this.byte(0);
    if (n > 0 && n < 123) return this.byte(n + 5);
    if (n < 0 && n > -124) return this.byte((n - 5) & 0xff);
    const bytes: number[] = [];
    let x = n;
    for (let i = 0; i < 4; i++) {
      bytes.push(x & 0xff);
      x >>= 8;
      if ((n >= 0 && x === 0) || (n < 0 && x === -1)) break;
    }
    this.byte(n >= 0 ? bytes.length : 256 - bytes.length);
    this.parts.push(Buffer.from(bytes));
  }

  bytes(b: Buffer) {
    this.long(b.length);
    this.parts.push(b);
  }

  symbol(name: string) {
    const known = this.symbols.get(name);
    if (known !== undefined) {
      this.byte(0x3b); // ';'
      this.long(known);
      return;
    }
    this.symbols.set(name, this.symbols.size);
    this.byte(0x3a); // ':'
    this.bytes(Buffer.from(name));
  }

  value(v: RubyValue): void {
    if (v === null) return this.byte(0x30); // '0'
    if (v === true) return this.byte(0x54); // 'T'
    if (v === false) return this.byte(0x46); // 'F'
    if (typeof v === 'number') {
      if (!Number.isInteger(v) || Math.abs(v) >= 2 ** 30) throw new Error(`no Marshal integer: ${v}`);
      this.byte(0x69); // 'i'
      return this.long(v);
    }
    if (typeof v === 'string') {
      // A UTF-8 string: 'I', the bytes, and one instance variable E = true.
      this.byte(0x49);
      this.byte(0x22);
      this.bytes(Buffer.from(v, 'utf8'));
      this.long(1);
      this.symbol('E');
      return this.byte(0x54);
    }
    if (v instanceof RubySymbol) return this.symbol(v.name);
    if (Array.isArray(v)) {
      this.byte(0x5b); // '['
      this.long(v.length);
      for (const e of v) this.value(e);
      return;
    }
    if (v instanceof RubyHash) {
      this.byte(0x7b); // '{'
      this.long(v.entries.length);
      for (const [k, e] of v.entries) {
        this.value(k);
        this.value(e);
      }
      return;
    }
    if (v instanceof RubyObject) {
      this.byte(0x6f); // 'o'
      this.symbol(v.className);
      this.long(v.ivars.length);
      for (const [name, e] of v.ivars) {
        this.symbol(`@${name}`);
        this.value(e);
      }
      return;
    }
    if (v instanceof RubyUserMarshal) {
      this.byte(0x55); // 'U'
      this.symbol(v.className);
      return this.value(v.value);
    }
    this.byte(0x75); // 'u'
    this.symbol(v.className);
    this.bytes(v.bytes);
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** `Marshal.dump(value)`. */
export function marshal(value: RubyValue): Buffer {
  const w = new Writer();
  w.byte(4);
  w.byte(8);
  w.value(value);
  return w.done();
}
