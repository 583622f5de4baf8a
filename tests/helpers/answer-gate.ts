/**
 * A barrier at the upstream, for tests whose outcome depends on the order of events there: each chat request that
 * reaches a reference upstream started with `{ gate: gate.pass }` is parked until the test lets it go. "Every
 * reservation was made before any clear" is then something the test establishes, not a hope that an answer takes
 * long enough: with a 2.5 s upstream delay instead, a loaded machine let a clear free money before the last of 200
 * parallel reservations, and 51 requests succeeded on a balance covering 50.
 *
 * The upstream runs in the test's process, so the barrier holds for app processes the test started too.
 */
export class AnswerGate {
  #parked: (() => void)[] = [];
  #open = false;
  #watchers = new Set<() => void>();

  /** For `startReferenceUpstream({ gate })`: resolves when the test lets this request's answer go. */
  readonly pass = (): Promise<void> => {
    if (this.#open) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#parked.push(resolve);
      for (const watch of this.#watchers) watch();
    });
  };

  /** Requests parked at the upstream now. */
  get parked(): number {
    return this.#parked.length;
  }

  /** Resolves once `n` requests are parked (an event, never a timer). */
  until(n: number): Promise<void> {
    return new Promise((resolve) => {
      const watch = () => {
        if (this.#parked.length < n) return;
        this.#watchers.delete(watch);
        resolve();
      };
      this.#watchers.add(watch);
      watch();
    });
  }

  /** Lets every parked answer go; requests arriving later are parked again. */
  release(): void {
    for (const resolve of this.#parked.splice(0)) resolve();
  }

  /**
   * Sends `n` requests at once and lets the upstream answer only when each of them has either come back (refused
   * before it reached the upstream) or is parked there: every reservation has then been attempted, and none has
   * been cleared. Requests that fail to reserve never reach the upstream, so waiting for a number of arrivals alone
   * would need the answer the test is checking.
   *
   * Should more than `atMost` arrive (more reserved than the design allows), the gate opens at once, so the test
   * fails on its counts instead of waiting for arrivals that cannot come (the router's upstream pool queues
   * requests beyond its sockets).
   */
  async burst(n: number, send: (i: number) => Promise<Response>, atMost = n): Promise<Response[]> {
    let back = 0;
    let decided = false;
    const check = () => {
      if (decided || (back + this.#parked.length < n && this.#parked.length <= atMost)) return;
      decided = true;
      this.#open = true; // from here on nothing waits: every reservation of the burst has been made
      this.release();
    };
    this.#watchers.add(check);
    const counted = (i: number) =>
      send(i).finally(() => {
        back += 1;
        check();
      });
    try {
      return await Promise.all(Array.from({ length: n }, (_, i) => counted(i)));
    } finally {
      this.#watchers.delete(check);
      this.#open = false;
    }
  }
}
