/** Serializes async work per key inside one process (e.g. commits of one thread). */
export class KeyedMutex {
  /** Per key, a promise that resolves (never rejects) when the last queued work is done. */
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Runs `work` once the key's earlier work is done. Not an `async` function: every commit and
   * lease renewal of a run passes here, and the uncontended case (nearly all) then costs one
   * promise and one callback instead of an async frame and its awaits. The key's tail is set
   * before `work` starts, so work that asks for the same key waits for it as before.
   */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    let release!: () => void;
    const tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#tails.set(key, tail);
    const finish = () => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
      release();
    };
    let result: Promise<T>;
    if (previous) {
      result = previous.then(work);
    } else {
      try {
        result = work();
      } catch (error) {
        result = Promise.reject(error);
      }
    }
    result.then(finish, finish);
    return result;
  }
}
