/**
 * The one abort helper: `work`, rejected with the signal's reason as soon as `signal` aborts.
 * Work that finishes after the abort is handed to `dispose` (a response body to destroy, a page
 * to close), so nothing it holds leaks.
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal, dispose?: (late: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      work.then((late) => dispose?.(late), () => {});
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
