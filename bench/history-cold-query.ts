/**
 * One cold query in a fresh process, for bench/history.ts: opens the hour tier of the chunk files
 * under argv[2] as the server does at start (`Tier.load`), then reads the series named in
 * argv[3] (a JSON file: keys, fromSec, toSec, expected point count) once and prints its wall and
 * CPU time (ms) as JSON. Nothing of the read path has run in this process before: no decoded
 * value, no parsed index and no optimised code.
 */
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { Tier } from '../src/monitor/history/tier.js';
import { readPoints, TIERS, verifyPieces } from './history-engines.js';

const [dir, queryFile] = process.argv.slice(2);
const query = JSON.parse(readFileSync(queryFile!, 'utf8')) as {
  keys: string[];
  fromSec: number;
  toSec: number;
  points: number;
};
const tier = new Tier(dir!, { name: 'hour', ...TIERS.hour }, pino({ level: 'silent' }));
tier.load();
const keys = new Set(query.keys);
const cpuBefore = process.cpuUsage();
const started = performance.now();
const answer = await readPoints(tier, keys, query.fromSec, query.toSec);
const wall = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
const count = verifyPieces(answer, query.fromSec, query.toSec);
if (count !== query.points) throw new Error(`read ${count} points, expected ${query.points}`);
console.log(JSON.stringify({ wall, cpu: (cpu.user + cpu.system) / 1000 }));
await tier.close();
