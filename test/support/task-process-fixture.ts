/**
 * A worker module for the task-process tests (test/integration/task-processes.test.ts): each task says
 * what the process should do with it.
 */
export type FixtureTask =
  | { kind: 'echo'; value: string }
  | { kind: 'throw'; message: string }
  | { kind: 'exit'; code: number }
  | { kind: 'spin'; ms: number }
  | { kind: 'wait'; ms: number }
  /**
   * Megabyte strings made whole until the heap is full: in a worker thread with a heap limit
   * this aborts the whole process (nodejs/node#47224), every time on Node 24.
   */
  | { kind: 'large-strings' }
  /** Many small objects kept until the heap is full. */
  | { kind: 'many-small-allocations' }
  | { kind: 'pid' }
  /** Keeps `mb` megabytes of written memory for the rest of the process's life. */
  | { kind: 'grow'; mb: number };

const keptForEver: Buffer[] = [];

export default async function runFixtureTask(task: FixtureTask): Promise<unknown> {
  switch (task.kind) {
    case 'echo':
      return { echoed: task.value };
    case 'throw':
      throw new Error(task.message);
    case 'exit':
      process.exit(task.code);
    case 'spin': {
      const until = Date.now() + task.ms;
      while (Date.now() < until);
      return 'spun';
    }
    case 'wait':
      await new Promise((resolve) => setTimeout(resolve, task.ms));
      return 'waited';
    case 'large-strings': {
      const megabyte = 'x'.repeat(1024 * 1024);
      const kept: string[] = [];
      for (;;) {
        const cut = Math.floor(Math.random() * megabyte.length);
        kept.push(megabyte.slice(0, cut) + 'y' + megabyte.slice(cut));
      }
    }
    case 'many-small-allocations': {
      const kept: object[] = [];
      for (;;) kept.push({ n: kept.length, s: `item ${kept.length}` });
    }
    case 'pid':
      return process.pid;
    case 'grow':
      for (let i = 0; i < task.mb; i++) keptForEver.push(Buffer.alloc(1024 * 1024, i + 1));
      return process.pid;
  }
}
