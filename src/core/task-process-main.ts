/**
 * Entry of a task process (task-processes.ts): loads the worker module named by its first
 * argument, says it is ready, then runs each task it is sent, one at a time, and answers it. It
 * leaves when the pool disconnects.
 */

/** From the pool to its process. */
export type ParentMessage<T> = { type: 'run'; id: number; task: T };
/** From a process to its pool. */
export type ChildMessage<R> = { type: 'ready' } | { type: 'done'; id: number; result: R } | { type: 'failed'; id: number; message: string };

type RunTask = (task: unknown) => unknown;

// Only as a child of the pool: imported for its types, this module does nothing.
if (process.send && process.argv[2]) {
  const send = (message: ChildMessage<unknown>): void => void process.send!(message);
  const { default: runTask } = (await import(process.argv[2])) as { default: RunTask };
  process.on('message', async (message: ParentMessage<unknown>) => {
    try {
      send({ type: 'done', id: message.id, result: await runTask(message.task) });
    } catch (error) {
      send({ type: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}
