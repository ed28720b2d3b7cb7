// In-process mutual exclusion by key: `run(key, fn)` starts `fn` once every earlier `run` of the
// same key has settled (whether it succeeded or failed). Used where one process must not
// interleave two writes of the same thing (a package blob, an upload, a wiki); across processes
// the database's constraints and transactions decide.
export class KeyedLock<K> {
  private readonly tails = new Map<K, Promise<void>>();

  async run<T>(key: K, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = before.then(() => new Promise<void>((r) => (release = r)));
    this.tails.set(key, tail);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
