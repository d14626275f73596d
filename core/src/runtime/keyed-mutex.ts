/** Serializes async work per key inside one process (e.g. commits of one thread). */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Uncontended (the common case): no chaining and no extra await, only this lock.
    const tail = previous ? previous.then(() => current) : current;
    this.#tails.set(key, tail);
    try {
      if (previous) await previous;
      return await work();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
