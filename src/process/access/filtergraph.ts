import type { Checks, Findings } from './context.js';
import { DENIED_FILTERS } from './option-table.js';

const DENIED = new RegExp(
  `(?:^|[^A-Za-z0-9_])(${DENIED_FILTERS.join('|')})(?:@[A-Za-z0-9_]*)?\\s*(?:=|[,;[\\]]|$)`,
  'i',
);

/**
 * Removes every quote and backslash. A filtergraph is unescaped at two levels (graph, then filter
 * options, each with `'…'` and `\`), so the characters that reach a filter are a subset of what
 * remains here in the same order: a name or path hidden by quoting (`'fre'i0r`, `/e\tc`) shows.
 */
export function stripQuoting(text: string): string {
  return text.replace(/['"\\]/g, '');
}

/**
 * Checks a filtergraph (`-vf`, `-filter_complex`, a lavfi input): refuses filters that load code,
 * open sockets or rewrite other filters' options at run time (`sendcmd`), and checks every path or
 * URL its options name (`movie=`, `drawtext=textfile=`, `subtitles=`, `psnr=stats_file=` …).
 */
export function checkFiltergraph(
  graph: string,
  where: string,
  depth: number,
  findings: Findings,
  checks: Checks,
): void {
  const plain = stripQuoting(graph);
  const denied = DENIED.exec(plain);
  if (denied !== null) {
    findings.refuse(
      where,
      `filter "${denied[1] as string}" loads code, opens sockets or takes commands, and is not allowed`,
    );
  }
  checks.value(plain, where, depth);
}
