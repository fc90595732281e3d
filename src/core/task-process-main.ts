/**
 * Entry of a task process (task-processes.ts): loads the worker module named by its first
 * argument, says it is ready, then runs each task it is sent, one at a time, and answers it. It
 * leaves when the pool disconnects, or after an answer once its resident memory has grown past
 * the high-water mark of its second argument (in MB, 0 for none): V8 keeps the heap a large page
 * grew to, and only a new process gives it back.
 */

/** From the pool to its process. */
export type ParentMessage<T> = { type: 'run'; id: number; task: T };
/** From a process to its pool. */
export type ChildMessage<R> =
  | { type: 'ready' }
  /** `retiring`: the process leaves after this answer; the pool gives it no other task. */
  | { type: 'done'; id: number; result: R; retiring: boolean }
  | { type: 'failed'; id: number; message: string; retiring: boolean };

type RunTask = (task: unknown) => unknown;

// Only as a child of the pool: imported for its types, this module does nothing.
if (process.send && process.argv[2]) {
  const highWaterBytes = Number(process.argv[3] ?? 0) * 2 ** 20;
  const { default: runTask } = (await import(process.argv[2])) as { default: RunTask };
  process.on('message', async (message: ParentMessage<unknown>) => {
    let answer: ChildMessage<unknown>;
    try {
      answer = { type: 'done', id: message.id, result: await runTask(message.task), retiring: false };
    } catch (error) {
      answer = { type: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error), retiring: false };
    }
    answer.retiring = highWaterBytes > 0 && process.memoryUsage.rss() > highWaterBytes;
    // Leave once the answer is on its way: the pool has already started a replacement.
    process.send!(answer, undefined, undefined, () => answer.retiring && process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready' } satisfies ChildMessage<never>);
}
