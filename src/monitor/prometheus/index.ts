export { PrometheusExposition, EXPOSITION_CONTENT_TYPES, type ExpositionFormat } from './exposition.js';
export { prometheusFamilies, type PrometheusFamily } from './families.js';
export { negotiateFormat } from './negotiate.js';
export { ScrapeCredential, type ScrapeCredentialConfig } from './scrape-credential.js';
