// Abort signals and sleeping that an abort ends. AbortSignal.any is newer than Node 18, so
// signals are combined by hand.

/** The reason to throw for an aborted signal (an AbortError DOMException unless the caller gave one). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

/** A signal that aborts when any of these does (with that one's reason), and a release for its listeners. */
export function anySignal(signals: (AbortSignal | undefined)[]): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  const listeners: [AbortSignal, () => void][] = [];
  const release = () => {
    for (const [signal, listener] of listeners) signal.removeEventListener("abort", listener);
    listeners.length = 0;
  };
  for (const signal of present) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      release();
      return { signal: controller.signal, release };
    }
    const listener = () => {
      controller.abort(signal.reason);
      release();
    };
    signal.addEventListener("abort", listener, { once: true });
    listeners.push([signal, listener]);
  }
  return { signal: controller.signal, release };
}

/** Wait `ms` milliseconds; rejects with the abort reason as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.min(2_147_483_647, Math.max(0, ms)));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * One listener on `parent` for any number of children: waiting on many tasks at once would
 * otherwise add a listener per poll to the caller's signal (and Node warns past ten).
 */
export class SignalFanout {
  private readonly children = new Set<AbortController>();
  private reason: { value: unknown } | undefined;
  private readonly onAbort = () => this.abort(this.parent?.reason);

  constructor(private readonly parent: AbortSignal | undefined) {
    if (parent?.aborted) this.reason = { value: parent.reason };
    else parent?.addEventListener("abort", this.onAbort, { once: true });
  }

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  /** A signal that aborts with the parent (or `abort`); `done` forgets it. */
  child(): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    if (this.reason) controller.abort(this.reason.value);
    else this.children.add(controller);
    return { signal: controller.signal, done: () => this.children.delete(controller) };
  }

  /** Abort every child, and every child made later, with this reason. */
  abort(reason: unknown): void {
    if (this.reason) return;
    this.reason = { value: reason };
    for (const child of this.children) child.abort(reason);
    this.children.clear();
  }

  close(): void {
    this.parent?.removeEventListener("abort", this.onAbort);
    this.children.clear();
  }
}

/**
 * Run `count` copies of `worker` at once (a pool of workers taking from shared work). The first
 * one to fail aborts the others through `fanout` and its error is thrown; `fanout` is closed
 * either way. Used by batch creation and by waiting on many tasks.
 */
export async function runWorkers(count: number, worker: () => Promise<void>, fanout: SignalFanout): Promise<void> {
  try {
    await Promise.all(
      Array.from({ length: count }, () =>
        worker().catch((error: unknown) => {
          fanout.abort(error);
          throw error;
        }),
      ),
    );
  } finally {
    fanout.close();
  }
}
