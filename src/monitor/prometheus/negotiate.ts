import type { ExpositionFormat } from './exposition.js';

/**
 * The format a scraper asked for in its `Accept` header: OpenMetrics when it lists
 * `application/openmetrics-text` with a quality at least that of the text format (Prometheus
 * sends `application/openmetrics-text;version=1.0.0,…,text/plain;version=0.0.4;q=0.5,*\/*;q=0.1`),
 * the 0.0.4 text format otherwise (also without an `Accept` header).
 */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  if (accept === undefined || !accept.toLowerCase().includes('application/openmetrics-text')) return 'text';
  let openMetricsQuality = 0;
  let textQuality = 0;
  for (const range of accept.split(',')) {
    const [mediaType = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const quality = qualityOf(parameters);
    if (mediaType === 'application/openmetrics-text') {
      openMetricsQuality = Math.max(openMetricsQuality, quality);
    } else if (mediaType === 'text/plain' || mediaType === 'text/*' || mediaType === '*/*') {
      textQuality = Math.max(textQuality, quality);
    }
  }
  return openMetricsQuality > 0 && openMetricsQuality >= textQuality ? 'openmetrics' : 'text';
}

function qualityOf(parameters: readonly string[]): number {
  for (const parameter of parameters) {
    if (!parameter.startsWith('q=')) continue;
    const quality = Number(parameter.slice(2));
    return Number.isFinite(quality) ? quality : 0;
  }
  return 1;
}
