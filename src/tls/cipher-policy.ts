import type { TlsOptions } from 'node:tls';

/**
 * TLS 1.2 and 1.3 only, and for 1.2 only forward-secret AEAD suites (Mozilla's "intermediate"
 * profile, without the DHE suites that need parameters of their own). TLS 1.3's suites are all
 * AEAD; node's defaults are kept for them.
 */
const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

const TLS13_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
].join(':');

/** The protocol policy of every TLS listener (HTTPS and RTMPS); the certificate comes separately. */
export const TLS_POLICY: Pick<TlsOptions, 'minVersion' | 'ciphers' | 'honorCipherOrder'> = {
  minVersion: 'TLSv1.2',
  ciphers: `${TLS13_CIPHERS}:${TLS12_CIPHERS}`,
  honorCipherOrder: true,
};
