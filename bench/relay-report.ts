/** What bench/rtmp-relay.ts and bench/srt-relay.ts measure per round, and their shared table. */
import { readFile } from 'node:fs/promises';
import { median } from './measure.js';

/** A player "fell behind" when its lag grew by more than this over the window (see the benches). */
export const BEHIND_MS = 1000;

export interface RelayRound {
  name: string;
  cpuPercent: number;
  cpuPerPlayer: number;
  /** Before the publisher connects: the server's own floor. */
  rssIdleMiB: number;
  rssMedianMiB: number;
  rssMaxMiB: number;
  ingressMbit: number;
  egressMbit: number;
  behind: number;
  worstLagGrowthMs: number;
  /** This process's CPU over the window (RTMP: it parses every player's stream); near 100 % it sets the pace. */
  generatorCpuPercent: number;
}

/** Rounds by server name, in the order they first ran; each recorded round is also logged. */
export class RelayRounds {
  private readonly rounds = new Map<string, RelayRound[]>();

  record(result: RelayRound): void {
    this.rounds.set(result.name, [...(this.rounds.get(result.name) ?? []), result]);
    process.stderr.write(
      `  ${result.name}: ${result.cpuPercent.toFixed(1)} % CPU, ${result.rssMedianMiB.toFixed(0)} MiB, ${result.behind} behind\n`,
    );
  }

  /** The markdown table: medians over rounds, the worst round for RSS max and players behind. */
  async print(heading: string, referenceSkipped: boolean): Promise<void> {
    const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
    console.log(`\n${heading}; load average at the end ${load}`);
    if (referenceSkipped) console.log('(no REFERENCE_CORE: the reference round was skipped)');
    console.log(
      `| round | server CPU (% of a core) | CPU per player (% of a core) | RSS idle → median / max (MiB) | ingress (Mbit/s) | egress (Mbit/s) | players behind > ${BEHIND_MS} ms (worst lag growth, ms) | load generator CPU (%) |`,
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const [name, results] of this.rounds) {
      const m = (pick: (r: RelayRound) => number): number => median(results.map(pick));
      const worst = (pick: (r: RelayRound) => number): number => Math.max(...results.map(pick));
      console.log(
        `| ${name} | ${m((r) => r.cpuPercent).toFixed(1)} | ${m((r) => r.cpuPerPlayer).toFixed(3)} | ${m((r) => r.rssIdleMiB).toFixed(0)} → ${m((r) => r.rssMedianMiB).toFixed(0)} / ${worst((r) => r.rssMaxMiB).toFixed(0)} | ${m((r) => r.ingressMbit).toFixed(2)} | ${m((r) => r.egressMbit).toFixed(1)} | ${worst((r) => r.behind)} (${worst((r) => r.worstLagGrowthMs).toFixed(0)}) | ${m((r) => r.generatorCpuPercent).toFixed(0)} |`,
      );
    }
  }
}
