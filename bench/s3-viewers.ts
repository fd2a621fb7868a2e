/**
 * 200 simulated HLS viewers of one stream written into an S3 filesystem, against the same from
 * memfs (docs/storage.md#s3-filesystems): what reading through the S3 mount costs the server,
 * how many requests reach the S3 endpoint, and whether anyone stalls.
 *
 * Method: the rounds of bench/hls-viewers.ts (server as a child process, one ffmpeg writing a
 * ~500 kbit/s HLS stream with 2-second segments by PUT, VIEWERS players joining over 5 s from
 * distinct loopback addresses, measured after a warm-up), twice in one run:
 *   - memfs: `{memfs}/bench.m3u8`, played at /memfs/bench.m3u8 (the baseline),
 *   - s3: `{fs:media}/bench.m3u8` into moto (a real S3 server, test/helpers/s3-endpoint.ts) on
 *     loopback, played at /s3/bench.m3u8; the endpoint's requests and answered bytes are counted
 *     over the same window.
 * The encoder's uploads reach S3 (one PUT per segment and per playlist version); the viewers'
 * reads should not (the server keeps what it wrote in its cache).
 *
 * Run: npm run build && node --import tsx bench/s3-viewers.ts   (about 3 minutes; DURATION_SEC, VIEWERS to change)
 */
import { runRound, type RoundResult } from './hls-viewers.js';
import { startS3Endpoint } from '../test/helpers/s3-endpoint.js';

const VIEWERS = Number(process.env.VIEWERS ?? 200);
const DURATION_SEC = Number(process.env.DURATION_SEC ?? 60);

async function main(): Promise<void> {
  const memfs = await runRound('memfs');
  const s3 = await startS3Endpoint();
  let s3Figures = { requestsPerSec: 0, upstreamKbit: 0 };
  let s3Round: RoundResult;
  try {
    let requests = 0;
    let bytes = 0;
    s3Round = await runRound('s3', {
      config: {
        storage: {
          s3: [
            {
              name: 'media',
              mountpoint: '/s3',
              auth: { enable: true, username: 'publisher', password: 'bench-password' },
              endpoint: s3.endpoint,
              access_key_id: s3.accessKeyId,
              secret_access_key: s3.secretAccessKey,
              bucket: 'bench',
              region: 'us-east-1',
              use_ssl: false,
            },
          ],
        },
      },
      place: { address: '{fs:media}/{processid}.m3u8', fs: 'media', playlist: '/s3/bench.m3u8' },
      probe: {
        start() {
          requests = s3.requests();
          bytes = s3.upstreamBytes();
        },
        stop(elapsedSec) {
          s3Figures = {
            requestsPerSec: (s3.requests() - requests) / elapsedSec,
            upstreamKbit: ((s3.upstreamBytes() - bytes) * 8) / elapsedSec / 1000,
          };
        },
      },
    });
  } finally {
    await s3.stop();
  }
  const lines = [
    `${VIEWERS} viewers, ${DURATION_SEC} s measured, one ~500 kbit/s stream with 2-second segments`,
    '',
    '| round | server CPU (% of a core) | RSS median / max (MiB) | egress (Mbit/s) | S3 requests/s | S3 answers (kbit/s) | segments | stalls (viewers) | errors | CPU vs memfs |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [r, figures] of [
    [memfs, undefined],
    [s3Round, s3Figures],
  ] as const) {
    lines.push(
      `| ${r.name} | ${r.cpuPercent.toFixed(1)} | ${r.rssMedianMiB.toFixed(0)} / ${r.rssMaxMiB.toFixed(0)} | ${r.egressMbit.toFixed(1)} | ${figures === undefined ? '–' : figures.requestsPerSec.toFixed(1)} | ${figures === undefined ? '–' : figures.upstreamKbit.toFixed(0)} | ${r.segments} | ${r.stalls} (${r.stalledViewers}) | ${r.errors} | ${(r.cpuPercent / memfs.cpuPercent).toFixed(2)}× |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
