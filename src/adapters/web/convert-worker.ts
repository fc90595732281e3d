/**
 * Conversion thread: turns one HTML page into its main content (Markdown or text) and its links,
 * with the pure functions of formats.ts. A page that takes too long only ever holds this thread,
 * which the pool terminates when the time limit passes (converter.ts).
 */
import { taskStarted, type PooledTask } from '../../core/task-threads.ts';
import type { ConvertTask } from './converter.ts';
import { convertPage, type ConvertedPage } from './formats.ts';

export default function runConvertTask(task: PooledTask<ConvertTask>): ConvertedPage {
  taskStarted(task.port);
  try {
    return convertPage(task.html, task.pageUrl, { format: task.format, links: task.links });
  } finally {
    task.port.close();
  }
}
