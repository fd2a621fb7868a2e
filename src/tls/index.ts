export { TlsService, type TlsDeps } from './tls-service.js';
export { ServedCertificate } from './served-certificate.js';
export { createCertificateServer } from './tls-server.js';
export { TLS_DOCS, TlsStatus, type TlsStatusView } from './contract.js';
