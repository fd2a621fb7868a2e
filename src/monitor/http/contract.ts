import { Type } from 'typebox';
import { BEARER, errors, GUARDED, JSON_BODY, opaque, type RouteDoc } from '../../http/index.js';

const CatalogEntry = Type.Object(
  { name: Type.String(), description: Type.String(), labels: Type.Array(Type.String()) },
  { title: 'MetricDescription' },
);

const QueryItem = Type.Object(
  {
    name: Type.String(),
    labels: Type.Optional(
      Type.Union([Type.Null(), Type.Record(Type.String(), Type.String())], {
        description: 'label name → RE2 pattern matched anywhere in the value',
      }),
    ),
  },
  { additionalProperties: true },
);

const Query = Type.Object(
  {
    timerange_sec: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    interval_sec: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    metrics: Type.Optional(Type.Union([Type.Array(QueryItem), Type.Null()])),
  },
  { title: 'MetricsQuery' },
);

const Answer = Type.Object(
  {
    timerange_sec: Type.Integer(),
    interval_sec: Type.Integer(),
    metrics: Type.Array(
      Type.Object({
        name: Type.String(),
        labels: Type.Record(Type.String(), Type.String()),
        values: Type.Array(Type.Tuple([Type.Integer(), Type.Number()]), {
          minItems: 1,
          description: '[unix seconds, value], oldest first',
        }),
      }),
    ),
  },
  { title: 'MetricsAnswer' },
);

const catalog: RouteDoc = {
  summary: 'The metrics catalog: every metric with its description and label names',
  tags: ['metrics'],
  security: BEARER,
  responses: { 200: Type.Array(CatalogEntry), ...errors(...GUARDED) },
};

const query: RouteDoc = {
  summary: 'Latest values or time series of metrics, with label selection',
  tags: ['metrics'],
  security: BEARER,
  body: Query,
  responses: { 200: Answer, ...errors(...GUARDED, ...JSON_BODY, 503) },
};

export const METRICS_DOCS: Record<string, RouteDoc> = {
  'GET /metrics': {
    summary: 'Prometheus scrape endpoint (text 0.0.4, or OpenMetrics when asked for)',
    tags: ['metrics'],
    security: [{}, { scrapeBearer: [] }, { scrapeBasic: [] }],
    produces: ['text/plain; version=0.0.4', 'application/openmetrics-text'],
    responses: { 200: opaque('the exposition'), ...errors(401, 404) },
  },
  'GET /api/v3/metrics': catalog,
  'GET /api/v3/metrics/': catalog,
  'POST /api/v3/metrics': query,
  'POST /api/v3/metrics/': query,
};
