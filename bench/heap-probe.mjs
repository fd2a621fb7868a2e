/**
 * Loaded with `--import` into a server started by bench/start-memory.ts: on SIGUSR2 it writes V8's
 * heap figures as JSON to the file named by HEAP_PROBE_OUT. Plain JavaScript and nothing imported
 * but Node's own modules, so that it adds next to nothing to what it measures.
 */
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';

const out = process.env.HEAP_PROBE_OUT;
if (out !== undefined) {
  process.on('SIGUSR2', () => {
    const heap = v8.getHeapStatistics();
    const code = v8.getHeapCodeStatistics();
    const spaces = Object.fromEntries(
      v8.getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]),
    );
    writeFileSync(
      out,
      JSON.stringify({
        heapPhysical: heap.total_physical_size,
        heapUsed: heap.used_heap_size,
        external: process.memoryUsage().external,
        bytecode: code.bytecode_and_metadata_size,
        machineCode: code.code_and_metadata_size,
        scriptSource: code.external_script_source_size,
        spaces,
      }),
    );
  });
}
