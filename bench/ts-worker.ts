/** A worker thread running a TypeScript file of the benchmarks (through tsx, as this process). */
import { Worker } from 'node:worker_threads';

/** Node's own loader does not read TypeScript: the thread registers tsx, then loads `file`. */
export function tsWorker(file: URL, workerData: unknown): Worker {
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
    .then(({ register }) => { register(); return import(${JSON.stringify(file.href)}); })`;
  return new Worker(boot, { eval: true, workerData });
}

/** Resolves with each worker's first message (its "ready" or its result). */
export function firstMessages<T>(workers: Worker[]): Promise<T[]> {
  return Promise.all(
    workers.map(
      (worker) =>
        new Promise<T>((resolve, reject) => {
          worker.once('message', (message: T) => resolve(message));
          worker.once('error', reject);
          worker.once('exit', (code) => reject(new Error(`a load thread exited with ${code}`)));
        }),
    ),
  );
}
