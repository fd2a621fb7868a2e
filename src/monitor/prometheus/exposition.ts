import { EncodedBody } from '../../http/index.js';
import type { MetricStore } from '../store/index.js';
import { escapeHelpOpenMetrics, escapeHelpText, escapeLabelValue, formatSampleValue } from './escape.js';
import { prometheusFamilies, type PrometheusFamily } from './families.js';

/** The two formats a scraper can ask for. */
export type ExpositionFormat = 'text' | 'openmetrics';

export const EXPOSITION_CONTENT_TYPES: Readonly<Record<ExpositionFormat, string>> = {
  text: 'text/plain; version=0.0.4; charset=utf-8',
  openmetrics: 'application/openmetrics-text; version=1.0.0; charset=utf-8',
};

/**
 * Renders the families of docs/metrics.md#prometheus-get-metrics from the newest snapshot of the store. Every family gets its
 * HELP and TYPE lines, even without samples; a series without a sample in the newest snapshot is
 * left out. The text only changes when a snapshot is committed, so it is cached per snapshot and
 * format.
 */
export class PrometheusExposition {
  private readonly store: MetricStore;
  private readonly core: string;
  private readonly families: readonly PrometheusFamily[] = prometheusFamilies();
  private readonly cache = new Map<ExpositionFormat, { seq: number; body: EncodedBody }>();

  /** `coreId` is the config `id`, sent as the `core` label of every sample. */
  constructor(store: MetricStore, coreId: string) {
    this.store = store;
    this.core = escapeLabelValue(coreId);
  }

  /** The exposition as text (tests, tools). */
  render(format: ExpositionFormat): string {
    return this.body(format).bytes.toString('utf8');
  }

  /** The exposition as bytes, with its gzip encoding made on demand; cached per snapshot. */
  body(format: ExpositionFormat): EncodedBody {
    const seq = this.store.newestSeq;
    const cached = this.cache.get(format);
    if (cached !== undefined && cached.seq === seq) return cached.body;
    const body = new EncodedBody(this.renderNow(format));
    this.cache.set(format, { seq, body });
    return body;
  }

  private renderNow(format: ExpositionFormat): string {
    const store = this.store;
    const seq = store.snapshotCount > 0 ? store.newestSeq : undefined;
    let text = '';
    for (const family of this.families) {
      if (format === 'openmetrics') {
        const { name, type } = family.openMetrics;
        text += `# HELP ${name} ${escapeHelpOpenMetrics(family.help)}\n# TYPE ${name} ${type}\n`;
      } else {
        text += `# HELP ${family.name} ${escapeHelpText(family.help)}\n# TYPE ${family.name} ${family.type}\n`;
      }
      if (seq === undefined) continue;
      for (const id of store.seriesOf(family.metricIndex)) {
        const value = store.value(id, seq);
        if (Number.isNaN(value)) continue;
        text += `${family.name}{${this.labelText(family, store.labelsOf(id))}} ${formatSampleValue(value)}\n`;
      }
    }
    return format === 'openmetrics' ? `${text}# EOF\n` : text;
  }

  private labelText(family: PrometheusFamily, labelValues: readonly string[]): string {
    let text = '';
    for (const label of family.labels) {
      const value =
        label.sourceIndex < 0 ? this.core : escapeLabelValue(labelValues[label.sourceIndex] ?? '');
      text += `${text === '' ? '' : ','}${label.name}="${value}"`;
    }
    return text;
  }
}
