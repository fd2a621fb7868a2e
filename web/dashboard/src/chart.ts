/** Line charts and sparklines drawn by uPlot, sized to their container. */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { AlignedData } from './metrics.js';

const PALETTE = ['#3b82f6', '#f97316', '#10b981', '#e11d48', '#8b5cf6', '#eab308', '#06b6d4', '#64748b'];

export interface ChartSeries {
  label: string;
}

export interface LineChartOptions {
  title: string;
  series: readonly ChartSeries[];
  /** Formats a y value for the axis and the legend. */
  format: (value: number) => string;
  height?: number;
  /** Called after every draw (the benchmark times a draw with it). */
  onDrawn?: () => void;
}

/** The time span a chart shows, unix seconds: the picked range, whatever the data covers. */
export interface TimeWindow {
  from: number;
  to: number;
}

/** A chart that can take new data; `destroy` releases it. */
export interface Chart {
  readonly element: HTMLElement;
  setData(data: AlignedData, window?: TimeWindow): void;
  destroy(): void;
}

/**
 * A time-series line chart; time is shown in the browser's zone (uPlot's default). The plot is
 * made when the element first gets its width, so it is drawn once at its real size rather than
 * drawn at a guess and again after a resize (which doubled the cost of a year of points).
 */
export function lineChart(options: LineChartOptions, data: AlignedData): Chart {
  const element = document.createElement('figure');
  element.className = 'chart';
  element.setAttribute('aria-label', options.title);
  const format = (_u: uPlot, value: number | null): string => (value === null ? '–' : options.format(value));
  const plotOptions = (width: number): uPlot.Options => ({
    title: options.title,
    width,
    height: options.height ?? 220,
    series: [
      {},
      ...options.series.map((series, i) => ({
        label: series.label,
        stroke: PALETTE[i % PALETTE.length],
        width: 1.5,
        value: format,
        points: { show: false },
      })),
    ],
    axes: [{}, { values: (u, values) => values.map((value) => format(u, value)), size: 80 }],
    scales: { x: { time: true } },
    cursor: { drag: { x: false, y: false } },
    hooks: options.onDrawn === undefined ? {} : { draw: [options.onDrawn] },
  });
  let current = data;
  let currentWindow: TimeWindow | undefined;
  let plot: uPlot | undefined;
  const show = (target: uPlot): void => {
    target.setData(toUplot(current));
    if (currentWindow !== undefined) target.setScale('x', { min: currentWindow.from, max: currentWindow.to });
  };
  const observer = new ResizeObserver((entries) => {
    const width = Math.floor(entries[0]?.contentRect.width ?? 0);
    if (width <= 0) return;
    if (plot === undefined) {
      plot = new uPlot(plotOptions(width), toUplot(current), element);
      if (currentWindow !== undefined) show(plot);
    } else if (width !== plot.width) plot.setSize({ width, height: plot.height });
  });
  observer.observe(element);
  return {
    element,
    setData: (next, window) => {
      current = next;
      currentWindow = window;
      if (plot !== undefined) show(plot);
    },
    destroy: () => {
      observer.disconnect();
      plot?.destroy();
    },
  };
}

/** A small chart with no axes or legend, for tables. */
export function sparkline(label: string, data: AlignedData): Chart {
  const element = document.createElement('span');
  element.className = 'sparkline';
  element.setAttribute('role', 'img');
  element.setAttribute('aria-label', label);
  const plot = new uPlot(
    {
      width: 120,
      height: 28,
      legend: { show: false },
      cursor: { show: false },
      axes: [{ show: false }, { show: false }],
      scales: { x: { time: false } },
      series: [{}, { stroke: PALETTE[0], width: 1, points: { show: false } }],
    },
    toUplot(data),
    element,
  );
  return { element, setData: (next) => plot.setData(toUplot(next)), destroy: () => plot.destroy() };
}

function toUplot(data: AlignedData): uPlot.AlignedData {
  return [data.times, ...data.columns] as uPlot.AlignedData;
}
