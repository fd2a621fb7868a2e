/**
 * Page for bench/dashboard.ts: draws one year of hourly points for 10 series with the dashboard's
 * own chart code, and the same points as one plain canvas path per series (the floor any chart
 * library pays), and reports the times on `window.benchResult`.
 */
import { lineChart } from '../src/chart.js';
import { align } from '../src/metrics.js';

const HOURS = 365 * 24;
const SERIES = 10;

function data(): [number, number][][] {
  const end = Math.floor(Date.now() / 3_600_000) * 3600;
  return Array.from({ length: SERIES }, (_, s) =>
    Array.from({ length: HOURS }, (_, i): [number, number] => [
      end - (HOURS - 1 - i) * 3600,
      50 + 40 * Math.sin(i / (24 + s)) + Math.random() * 5,
    ]),
  );
}

function nextFrame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

/** From creating the chart to the end of its first draw (uPlot's `draw` hook). */
function drawChart(series: [number, number][][]): Promise<number> {
  return new Promise((resolve) => {
    const start = performance.now();
    const chart = lineChart(
      {
        title: 'bench',
        series: series.map((_, i) => ({ label: `s${i}` })),
        format: (v) => v.toFixed(1),
        onDrawn: () => {
          const took = performance.now() - start;
          chart.destroy();
          chart.element.remove();
          resolve(took);
        },
      },
      align(series),
    );
    chart.element.style.width = '1200px';
    document.body.append(chart.element);
  });
}

/** The same points stroked as one canvas path per series, synchronously. */
async function drawPlain(series: [number, number][][]): Promise<number> {
  await nextFrame();
  const start = performance.now();
  const canvas = document.createElement('canvas');
  canvas.width = 1200;
  canvas.height = 220;
  document.body.append(canvas);
  const context = canvas.getContext('2d')!;
  const t0 = series[0]![0]![0];
  const span = series[0]!.at(-1)![0] - t0;
  for (const points of series) {
    context.beginPath();
    points.forEach(([t, v], i) => {
      const x = ((t - t0) / span) * 1200;
      const y = 220 - (v / 100) * 220;
      if (i === 0) context.moveTo(x, y);
      else context.lineTo(x, y);
    });
    context.stroke();
  }
  const took = performance.now() - start;
  canvas.remove();
  return took;
}

async function run(): Promise<void> {
  const series = data();
  const chart: number[] = [];
  const plain: number[] = [];
  for (let round = 0; round < 7; round++) {
    chart.push(await drawChart(series));
    plain.push(await drawPlain(series));
  }
  (window as unknown as { benchResult: unknown }).benchResult = { chart, plain, points: HOURS * SERIES };
}

void run();
